#!/usr/bin/python3
"""Parses a memory timeline (--zero-memory-timeline) as XML: the .svg file,
or the SVG inside the .html page (whose text must be UTF-8 without control
characters other than newlines). Exits 1 with the parser's error if it does
not parse; prints each tensor listed at a peak as `name: DATA-NAME` and
`label: LABEL`, the title as `title: TITLE`.
"""

import re
import sys
import xml.etree.ElementTree as ElementTree

SVG = "{http://www.w3.org/2000/svg}"


def main():
    path = sys.argv[1]
    data = open(path, "rb").read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        sys.exit("%s: not UTF-8: %s" % (path, error))
    bad = re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", text)
    if bad:
        sys.exit("%s: control character U+%04X at %d" %
                 (path, ord(bad.group()), bad.start()))
    if path.endswith(".html"):
        title = re.search("<title>(.*)</title>", text)
        print("title:", title.group(1) if title else None)
        svg = re.search("<svg .*</svg>", text, re.DOTALL)
        if not svg:
            sys.exit("%s: no <svg> element" % path)
        text = svg.group()
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        sys.exit("%s: not well-formed XML: %s" % (path, error))
    for element in root.iter(SVG + "text"):
        if element.get("class") != "live-at-peak":
            continue
        print("name:", element.get("data-name"))
        print("label:", element.find(SVG + "title").tail)
    print("parsed")


if __name__ == "__main__":
    main()
