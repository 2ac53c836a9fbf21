// Hidden tests of Solution.java. Each TpCheck.check(n, () -> condition) is one check, counted by
// the harness's check library (TpCheck).
public class Main {
    public static void main(String[] args) {
        Solution s = new Solution();
        TpCheck.check(1, () -> s.fromRoman("III") == 3);
        TpCheck.check(2, () -> s.fromRoman("VIII") == 8 && s.fromRoman("XX") == 20);
        TpCheck.check(3, () -> s.fromRoman("MMXXIV") == 2024);
        TpCheck.check(4, () -> s.fromRoman("MDCCCLXXXVIII") == 1888);
        TpCheck.check(5, () -> s.fromRoman("IX") == 9 && s.fromRoman("CM") == 900 && s.fromRoman("I") == 1);
        TpCheck.check(6, () -> s.isCanonical("XXX") && s.isCanonical("MMM"));
        TpCheck.check(7, () -> !s.isCanonical("IIII") && !s.isCanonical("VX"));
        TpCheck.check(8, () -> s.add("XIX", "II").equals("XXI"));
        TpCheck.check(9, () -> {
            for (int n = 1; n <= 3999; n++) {
                if (s.fromRoman(s.toRoman(n)) != n) {
                    return false;
                }
            }
            return true;
        });
        TpCheck.finish();
    }
}
