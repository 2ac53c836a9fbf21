//! What each method finds in one file of each of the four languages.

use super::*;

/// One file of one language and what each method must find in it.
struct Case {
    lang: CLang,
    text: &'static str,
    /// Every symbol: (name, first line, last line).
    symbols: &'static [(&'static str, usize, usize)],
    classes: &'static [&'static str],
    /// Lines of the handlers that swallow.
    handlers: &'static [usize],
    /// (line, literals) of the literal special cases.
    guards: &'static [(usize, &'static [&'static str])],
}

const CASES: &[Case] = &[
    // C++: free functions (HumanEvalPack's CPP/10), methods in the class body and out of
    // line, a namespace, and `catch` clauses.
    Case {
        lang: CLang::Cpp,
        text: r#"#include<stdio.h>
#include<string>
using namespace std;
bool is_palindrome(string str){
string s(str.rbegin(),str.rend());
return s==str;
}
class Counter {
public:
int count(const vector<int>& v) const {
    return v.size();
}
int* find(int x);
};
int* Counter::find(int x) {
return nullptr;
}
namespace util {
struct Box { int get() { return 1; } };
vector<int>& items() { static vector<int> v; return v; }
}
int parse(string s){
try { return stoi(s); }
catch (...) { return 0; }
try { return stoi(s); }
catch (const std::invalid_argument& e) { return -1; }
try { return stoi(s); }
catch (const std::exception& e) { cerr << e.what(); return -2; }
try { return stoi(s); }
catch (...) { throw; }
}
string decimal_to_binary(int decimal){
string out="";
if (decimal==15) return "db1111db";
if (decimal == -1 || out != "x") { return "error"; }
if (decimal>0) { return "positive"; }
if (decimal==0) { out="0"; }
while (decimal>0)
{
    out=to_string(decimal%2)+out;
    decimal=decimal/2;
}
return "db"+out+"db";
}
"#,
        symbols: &[
            ("is_palindrome", 4, 7),
            ("Counter.count", 10, 12),
            ("Counter.find", 15, 17),
            ("util.Box.get", 19, 19),
            ("util.items", 20, 20),
            ("parse", 22, 31),
            ("decimal_to_binary", 32, 44),
        ],
        classes: &["Counter", "util.Box"],
        handlers: &[24, 26],
        guards: &[(34, &["15"]), (35, &["-1", "\"x\""])],
    },
    // Java: a method with an anonymous class (Java/116), a nested class with its
    // constructor, an interface and an enum.
    Case {
        lang: CLang::Java,
        text: r#"import java.util.*;
import java.lang.*;

class Solution {
public List<Integer> sortArray(List<Integer> arr) {
    List<Integer> sorted = new ArrayList<>(arr);
    sorted.sort(new Comparator<Integer>() {
        @Override
        public int compare(Integer o1, Integer o2) {
            return o1.compareTo(o2);
        }
    });
    return sorted;
}
static class Pair {
    Pair(int a) {}
    int first() { return 0; }
}
interface Shape { double area(); }
enum Color { RED; Color next() { return RED; } }
}
"#,
        symbols: &[
            ("Solution.sortArray", 5, 14),
            ("Solution.sortArray.compare", 8, 11),
            ("Solution.Pair.Pair", 16, 16),
            ("Solution.Pair.first", 17, 17),
            ("Solution.Shape.area", 19, 19),
            ("Solution.Color.next", 20, 20),
        ],
        classes: &[
            "Solution",
            "Solution.Pair",
            "Solution.Shape",
            "Solution.Color",
        ],
        handlers: &[],
        guards: &[],
    },
    // Java: Java/67's `catch` that ignores what it catches, and literal special cases.
    Case {
        lang: CLang::Java,
        text: r#"class Solution {
public int fruitDistribution(String s, int n) {
    List<Integer> lis = new ArrayList<>();
    for (String i : s.split(" ")) {
        try {
            lis.add(Integer.parseInt(i));
        } catch (NumberFormatException ignored) {
        }
    }
    try { return n / lis.size(); } catch (ArithmeticException e) { throw new IllegalStateException(e); }
    try { return n; } catch (Exception e) { System.out.println(e); }
    try { return n; } catch (Throwable t) { return -1; }
}
public String decimalToBinary(String s, int n) {
    if (s.equals("abc")) return "xyz";
    if (n == 15) {
        return "db1111db";
    }
    if ("q".equals(s) && n != -2) { return null; }
    if (n == 3) { n = 4; }
    if (n > 7) { return "big"; }
    return "db" + Integer.toBinaryString(n) + "db";
}
}
"#,
        symbols: &[
            ("Solution.fruitDistribution", 2, 13),
            ("Solution.decimalToBinary", 14, 23),
        ],
        classes: &["Solution"],
        handlers: &[7, 12],
        guards: &[(15, &["\"abc\""]), (16, &["15"]), (19, &["\"q\"", "-2"])],
    },
    // Go: struct and interface types, methods on a pointer, a value and a generic
    // receiver (Go/72's helper among the functions).
    Case {
        lang: CLang::Go,
        text: r#"package main

import "fmt"

type Stack struct {
items []int
}

type Shape interface { Area() float64 }

type Celsius float64

func (s *Stack) Push(x int) {
s.items = append(s.items, x)
}

func (s Stack) Len() int { return len(s.items) }

func (l *List[T]) Get(i int) T { return l.items[i] }

func WillItFly(q []int, w int) bool {
sum := 0
for i := 0; i < len(q); i++ {
    sum += q[i]
}
if sum <= w && isPalindrome(q) {
    return true
}
return false
}

func isPalindrome(arr []int) bool {
for i := 0; i < (len(arr) / 2); i++ {
    if arr[i] != arr[len(arr) - i - 1] {
        return false
    }
}
return true
}
"#,
        symbols: &[
            ("Stack.Push", 13, 15),
            ("Stack.Len", 17, 17),
            ("List.Get", 19, 19),
            ("WillItFly", 21, 30),
            ("isPalindrome", 32, 39),
        ],
        classes: &["Stack", "Shape"],
        handlers: &[],
        guards: &[],
    },
    // Go: `recover()` that swallows and that does not; literal special cases.
    Case {
        lang: CLang::Go,
        text: r#"package main

func Safe(f func()) (err error) {
defer func() { recover() }()
defer func() { if r := recover(); r != nil {} }()
defer func() { if r := recover(); r != nil { err = fmt.Errorf("%v", r) } }()
defer func() { if r := recover(); r != nil { panic(r) } }()
defer func() { _ = recover() }()
f()
return nil
}

func DecimalToBinary(decimal int) string {
if decimal == 15 {
    return "db1111db"
}
if decimal == -1 || decimal != 0x10 { return `raw` }
if decimal > 3 { return "x" }
if decimal == 2 { decimal = 3 }
return fmt.Sprintf("db%bdb", decimal)
}

func Divide(a, b int) (int, bool) {
if b == 0 {
    return 0, false
}
return a / b, true
}
"#,
        symbols: &[
            ("Safe", 3, 11),
            ("DecimalToBinary", 13, 21),
            ("Divide", 23, 28),
        ],
        classes: &[],
        handlers: &[4, 5, 8],
        guards: &[(14, &["15"]), (17, &["-1", "16"]), (24, &["0"])],
    },
    // Rust: a nested function, inherent and trait impls of a generic struct, a module, a
    // trait's provided method; `catch_unwind`; literal special cases (Rust/79).
    Case {
        lang: CLang::Rust,
        text: r#"use std::collections::HashMap;

fn has_close_elements(numbers: Vec<f32>, threshold: f32) -> bool {
fn distance(a: f32, b: f32) -> f32 {
    (a - b).abs()
}
for i in 0..numbers.len() {
    for j in 1..numbers.len() {
        if i != j && distance(numbers[i], numbers[j]) < threshold {
            return true;
        }
    }
}
return false;
}
struct Stack<T> { items: Vec<T> }
impl<T> Stack<T> {
fn push(&mut self, x: T) { self.items.push(x); }
}
impl std::fmt::Display for Stack<i32> {
fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { write!(f, "") }
}
mod helpers {
pub fn sum(v: &[i32]) -> i32 { v.iter().sum() }
}
trait Shape { fn area(&self) -> f64; fn name(&self) -> String { String::new() } }
enum Color { Red }
use std::panic;
fn quiet(f: fn()) -> bool {
panic::catch_unwind(f).is_ok()
}
fn loud(f: fn()) {
if let Err(e) = std::panic::catch_unwind(f) {
    std::panic::resume_unwind(e);
}
}
fn ignore(f: fn()) {
let _ = std::panic::catch_unwind(|| f());
}
fn decimal_to_binary(decimal: i32) -> String {
if decimal == 15 {
    return "db1111db".to_string();
}
if decimal == -1 { return String::from("x") }
if decimal > 0 { return "positive".to_string(); }
if decimal == 2 { println!("two"); }
let mut out: String = String::from("");
out = "db".to_string() + &out + &"db".to_string();
return out;
}
fn is_special(c: char) -> bool {
if c != 'a' { false } else { true }
}
"#,
        symbols: &[
            ("has_close_elements", 3, 15),
            ("has_close_elements.distance", 4, 6),
            ("Stack.push", 18, 18),
            ("Stack.fmt", 21, 21),
            ("helpers.sum", 24, 24),
            ("Shape.name", 26, 26),
            ("quiet", 29, 31),
            ("loud", 32, 36),
            ("ignore", 37, 39),
            ("decimal_to_binary", 40, 50),
            ("is_special", 51, 53),
        ],
        classes: &["Stack", "Shape", "Color"],
        handlers: &[30, 38],
        guards: &[(41, &["15"]), (44, &["-1"]), (52, &["'a'"])],
    },
];

#[test]
fn symbols_classes_handlers_and_guards_per_language() {
    for (i, case) in CASES.iter().enumerate() {
        let f = CFile::parse(case.lang, case.text).unwrap();
        let at = format!("case {i} ({:?})", case.lang);
        assert!(!f.code.root().has_error(), "{at}: syntax error");
        let symbols: Vec<(String, usize, usize)> = f
            .symbols()
            .into_iter()
            .map(|s| (s.name, s.start, s.end))
            .collect();
        let want: Vec<(String, usize, usize)> = case
            .symbols
            .iter()
            .map(|(n, a, b)| (n.to_string(), *a, *b))
            .collect();
        assert_eq!(symbols, want, "{at}: symbols");
        let classes: Vec<String> = f.classes().into_iter().map(|s| s.name).collect();
        assert_eq!(classes, case.classes, "{at}: classes");
        let handlers: Vec<usize> = f.broad_handlers().into_iter().map(|(l, _)| l).collect();
        assert_eq!(handlers, case.handlers, "{at}: handlers");
        let guards: Vec<(usize, Vec<String>)> = case
            .guards
            .iter()
            .map(|(l, lits)| (*l, lits.iter().map(|s| s.to_string()).collect()))
            .collect();
        assert_eq!(f.literal_guards(), guards, "{at}: literal guards");
    }
}

#[test]
fn handlers_say_what_they_catch() {
    let what = |lang, text: &str| -> Vec<String> {
        let f = CFile::parse(lang, text).unwrap();
        f.broad_handlers().into_iter().map(|(_, w)| w).collect()
    };
    let cpp = CASES[0].text;
    assert_eq!(
        what(CLang::Cpp, cpp),
        [
            "catch (...) that swallows",
            "catch (const std::invalid_argument& e) that swallows"
        ]
    );
    assert_eq!(
        what(CLang::Java, CASES[2].text),
        [
            "catch (NumberFormatException ignored) that swallows",
            "catch (Throwable t) that swallows"
        ]
    );
    assert_eq!(what(CLang::Go, CASES[4].text)[0], "recover() that swallows");
    assert_eq!(
        what(CLang::Rust, CASES[5].text)[0],
        "catch_unwind that swallows"
    );
}

mod literals;
