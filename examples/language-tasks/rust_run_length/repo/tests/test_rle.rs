include!("../rle.rs");

// Public tests of rle.rs. Each tp_check(n, || { assert... }) is one check, counted by the
// harness's check library (tp_check.rs).

fn main() {
    tp_check(1, || {
        assert_eq!(runs("aaabcc"), vec![('a', 3), ('b', 1), ('c', 2)]);
    });
    tp_check(2, || {
        assert_eq!(encode("aaabcc"), "3ab2c");
        assert_eq!(encode(""), "");
    });
    tp_check(3, || {
        assert_eq!(decode("3ab2c"), "aaabcc");
        assert_eq!(decode("x"), "x");
    });
    tp_check(4, || {
        assert_eq!(decoded_len("4x2y"), 6);
    });
    tp_check(5, || {
        assert_eq!(longest_run("abbbcc"), Some(('b', 3)));
        assert_eq!(longest_run(""), None);
    });
    tp_check(6, || {
        let row = "..##....#";
        assert_eq!(decode(&encode(row)), row);
    });
    tp_finish();
}
