// Public tests of Solution.java. Each TpCheck.check(n, () -> condition) is one check, counted by
// the harness's check library (TpCheck).
public class Main {
    static boolean rejects(Runnable r) {
        try {
            r.run();
        } catch (IllegalArgumentException e) {
            return true;
        }
        return false;
    }

    public static void main(String[] args) {
        Solution s = new Solution();
        TpCheck.check(1, () -> s.toRoman(1994).equals("MCMXCIV") && s.toRoman(2024).equals("MMXXIV"));
        TpCheck.check(2, () -> s.fromRoman("XIV") == 14 && s.fromRoman("XC") == 90);
        TpCheck.check(3, () -> s.fromRoman("MCMXCIV") == 1994);
        TpCheck.check(4, () -> s.isCanonical("CDXLIV") && !s.isCanonical("IM"));
        TpCheck.check(5, () -> rejects(() -> s.toRoman(0)) && rejects(() -> s.fromRoman("XIQ")));
        TpCheck.finish();
    }
}
