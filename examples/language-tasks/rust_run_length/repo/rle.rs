// Run-length coding for the sprite sheets' pixel rows: a run of one character repeated is
// stored as its length and the character ("aaab" is stored as "3ab"). The rows hold letters and
// punctuation, never digits.

/// The runs of `text`, in order: each character with how many times it repeats in a row.
pub fn runs(text: &str) -> Vec<(char, usize)> {
    let mut out: Vec<(char, usize)> = Vec::new();
    for c in text.chars() {
        match out.last_mut() {
            Some((last, n)) if *last == c => *n += 1,
            _ => out.push((c, 1)),
        }
    }
    out
}

/// `text` run-length coded: each run as its length and its character, the length left out
/// when it is 1 ("aaabcc" gives "3ab2c").
pub fn encode(text: &str) -> String {
    let mut out = String::new();
    for (c, n) in runs(text) {
        if n > 1 {
            out.push_str(&n.to_string());
        }
        out.push(c);
    }
    out
}

/// The text `code` stands for, as `encode` writes it: a character after a count is repeated
/// that many times, one without a count stands for itself. A count at the end, with no
/// character after it, is dropped.
pub fn decode(code: &str) -> String {
    let mut out = String::new();
    let mut count: Option<u8> = None;
    for c in code.chars() {
        if let Some(d) = c.to_digit(10) {
            count = Some(d as u8);
        } else {
            let n = count.take().unwrap_or(1);
            for _ in 0..n {
                out.push(c);
            }
        }
    }
    out
}

/// How many characters `code` decodes to.
pub fn decoded_len(code: &str) -> usize {
    decode(code).chars().count()
}

/// The longest run of `text` (the first of equally long ones); `None` for an empty text.
pub fn longest_run(text: &str) -> Option<(char, usize)> {
    let mut best: Option<(char, usize)> = None;
    for (c, n) in runs(text) {
        if best.map_or(true, |(_, longest)| n > longest) {
            best = Some((c, n));
        }
    }
    best
}
