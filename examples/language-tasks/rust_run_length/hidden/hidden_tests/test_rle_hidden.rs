include!("../rle.rs");

// Hidden tests of rle.rs. Each tp_check(n, || { assert... }) is one check, counted by the
// harness's check library (tp_check.rs).

fn main() {
    tp_check(1, || {
        assert_eq!(decode("12a"), "a".repeat(12));
    });
    tp_check(2, || {
        assert_eq!(decode("10b3c"), format!("{}ccc", "b".repeat(10)));
    });
    tp_check(3, || {
        assert_eq!(decode("3ab2c"), "aaabcc");
        assert_eq!(decode("a"), "a");
        assert_eq!(decode(""), "");
    });
    tp_check(4, || {
        assert_eq!(decoded_len("100x"), 100);
        assert_eq!(decoded_len("4x2y"), 6);
    });
    tp_check(5, || {
        assert_eq!(encode(&"z".repeat(25)), "25z");
    });
    tp_check(6, || {
        assert_eq!(decode("300a"), "a".repeat(300));
    });
    tp_check(7, || {
        assert_eq!(decode("2a5"), "aa");
        assert_eq!(decode("12"), "");
    });
    tp_check(8, || {
        for n in 1..=300 {
            let row = format!("{}.{}", "#".repeat(n), "-".repeat(301 - n));
            let code = encode(&row);
            assert_eq!(decode(&code), row, "a run of {}", n);
            assert_eq!(decoded_len(&code), 302, "a run of {}", n);
        }
    });
    tp_finish();
}
