package main

// Hidden tests of wrap.go. Each tpCheck(t, n, func() { assert... }) is one check, counted by the
// harness's check library (tp_check.go).

import (
	"strings"

	"github.com/stretchr/testify/assert"
)

func TestWrapHidden(t *tpT) {
	assert := assert.New(t)
	tpCheck(t, 1, func() {
		assert.Equal([]string{"the quick", "brown fox"}, Wrap("the quick brown fox", 9))
	})
	tpCheck(t, 2, func() { assert.Equal([]string{"ab cd"}, Wrap("ab cd", 5)) })
	tpCheck(t, 3, func() { assert.Equal([]string{"ab", "cd"}, Wrap("ab cd", 4)) })
	tpCheck(t, 4, func() { assert.Equal("one two\nthree", Fill("one two three", 7)) })
	tpCheck(t, 5, func() { assert.Equal([]string{"a"}, Wrap("a", 1)) })
	tpCheck(t, 6, func() {
		assert.Equal([]string{"abcdefgh", "ij"}, Wrap("abcdefgh ij", 4))
	})
	tpCheck(t, 7, func() { assert.Equal(7, Widest(Wrap("one two three", 7))) })
	tpCheck(t, 8, func() {
		text := "a bb ccc dddd eeeee ffffff"
		for width := 6; width <= 14; width++ {
			lines := Wrap(text, width)
			assert.Equal(text, strings.Join(lines, " "), "width %d", width)
			assert.LessOrEqual(Widest(lines), width, "width %d", width)
			for i := 0; i+1 < len(lines); i++ {
				next := strings.Fields(lines[i+1])[0]
				assert.Greater(len(lines[i])+1+len(next), width, "line %d at width %d could take the next word", i, width)
			}
		}
	})
}

func main() {
	TestWrapHidden(&tpT{})
	tpFinish()
}
