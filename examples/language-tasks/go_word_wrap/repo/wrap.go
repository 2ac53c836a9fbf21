package main

import "strings"

// Wrap breaks text into lines of at most width characters, at spaces; runs of spaces count as
// one. A word longer than width gets a line of its own.
func Wrap(text string, width int) []string {
	lines := []string{}
	line := ""
	for _, word := range strings.Fields(text) {
		if line == "" {
			line = word
		} else if len(line)+1+len(word) < width {
			line += " " + word
		} else {
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// Fill is Wrap's lines joined by newlines.
func Fill(text string, width int) string {
	return strings.Join(Wrap(text, width), "\n")
}

// Indent puts prefix before every line.
func Indent(lines []string, prefix string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = prefix + l
	}
	return out
}

// Widest is the length of the longest line.
func Widest(lines []string) int {
	widest := 0
	for _, l := range lines {
		if len(l) > widest {
			widest = len(l)
		}
	}
	return widest
}
