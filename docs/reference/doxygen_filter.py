"""Doxygen input filter (docs/reference/Doxyfile). Maroon's headers comment with plain // and
/* */, which Doxygen ignores, so this presents a comment block before a declaration as /// (or
/**), a comment after code on the same line as ///< (or /**<), and the comment that opens a
file as the file's own (@file). Only what Doxygen reads changes; the headers stay as they are."""
import re
import sys

LEADING = re.compile(r"^(\s*)//(?!/)")                 # a whole-line // comment
LEADING_C = re.compile(r"^(\s*)/\*(?![*!])")            # a /* comment opening a line
TRAILING = re.compile(r"(;|,|\{)\s*//(?!/)\s?")          # code, then a // comment
TRAILING_C = re.compile(r"(;|,|\{)\s*/\*(?![*!<])\s?")   # code, then a /* comment


def convert(number, line):
    if number == 0 and LEADING.match(line):
        return "/// @file\n" + LEADING.sub(r"\1///", line, count=1)
    if number == 0 and LEADING_C.match(line):
        return "/** @file\n" + LEADING_C.sub(r"\1 *", line, count=1)
    if LEADING.match(line):
        return LEADING.sub(r"\1///", line, count=1)
    if LEADING_C.match(line):
        return LEADING_C.sub(r"\1/**", line, count=1)
    if '"' not in line:  # a // inside a string literal is not a comment
        line = TRAILING.sub(r"\1 ///< ", line, count=1)
        line = TRAILING_C.sub(r"\1 /**< ", line, count=1)
    return line


def main(path):
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f):
            sys.stdout.write(convert(number, line))


if __name__ == "__main__":
    main(sys.argv[1])
