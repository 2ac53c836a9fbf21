// Roman numerals for the chapter and year labels of the catalogue (1 to 3999).
class Solution {
    private static final int[] VALUES = {1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1};
    private static final String[] SYMBOLS = {
        "M", "CM", "D", "CD", "C", "XC", "L", "XL", "X", "IX", "V", "IV", "I"
    };

    /** The value of one numeral letter. */
    public int value(char letter) {
        switch (letter) {
            case 'I': return 1;
            case 'V': return 5;
            case 'X': return 10;
            case 'L': return 50;
            case 'C': return 100;
            case 'D': return 500;
            case 'M': return 1000;
            default: throw new IllegalArgumentException("not a Roman numeral letter: " + letter);
        }
    }

    /** n in Roman numerals, for 1 <= n <= 3999. */
    public String toRoman(int n) {
        if (n < 1 || n > 3999) {
            throw new IllegalArgumentException("no Roman numeral for " + n);
        }
        StringBuilder out = new StringBuilder();
        for (int k = 0; k < VALUES.length; k++) {
            while (n >= VALUES[k]) {
                out.append(SYMBOLS[k]);
                n -= VALUES[k];
            }
        }
        return out.toString();
    }

    /** The number a numeral stands for: a letter before a larger one is subtracted (IV is 4). */
    public int fromRoman(String s) {
        if (s.isEmpty()) {
            throw new IllegalArgumentException("empty numeral");
        }
        int total = 0;
        for (int i = 0; i + 1 < s.length(); i++) {
            int v = value(s.charAt(i));
            if (v <= value(s.charAt(i + 1))) {
                total -= v;
            } else {
                total += v;
            }
        }
        return total + value(s.charAt(s.length() - 1));
    }

    /** True when s is a numeral written the standard way (as toRoman writes it). */
    public boolean isCanonical(String s) {
        int n = fromRoman(s);
        return n >= 1 && n <= 3999 && toRoman(n).equals(s);
    }

    /** The sum of two numerals, as a numeral. */
    public String add(String a, String b) {
        return toRoman(fromRoman(a) + fromRoman(b));
    }
}
