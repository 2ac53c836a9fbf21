package main

// Public tests of wrap.go. Each tpCheck(t, n, func() { assert... }) is one check, counted by the
// harness's check library (tp_check.go).

import (
	"github.com/stretchr/testify/assert"
)

func TestWrap(t *tpT) {
	assert := assert.New(t)
	tpCheck(t, 1, func() {
		assert.Equal([]string{"the quick", "brown fox"}, Wrap("the quick brown fox", 10))
	})
	tpCheck(t, 2, func() { assert.Equal([]string{}, Wrap("   ", 8)) })
	tpCheck(t, 3, func() { assert.Equal("a bb\nccc", Fill("a  bb ccc", 5)) })
	tpCheck(t, 4, func() { assert.Equal([]string{"> x", "> y"}, Indent([]string{"x", "y"}, "> ")) })
	tpCheck(t, 5, func() { assert.Equal(4, Widest([]string{"ab", "abcd", "abc"})) })
}

func main() {
	TestWrap(&tpT{})
	tpFinish()
}
