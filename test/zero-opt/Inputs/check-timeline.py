"""Checks a memory timeline (zero-opt --zero-memory-timeline) against the
report of the same run (--zero-report), and prints what it drew.

usage: check-timeline.py TIMELINE.{svg,html} REPORT.json

Every panel's max live, arena and budget, every category's peak and the
tensors listed at the peak must equal the report's; the phases must cover
the program points in order. Exits 1 naming the first difference.
"""

import json
import re
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"

# The report's key for each category's number in memory_spaces.<space>.
CATEGORY_KEYS = {
    "parameters": "parameters",
    "gradients": "gradients",
    "optimizer states": "optimizer_states",
    "inputs": "inputs",
    "activations": "activations_peak",
    "communication buffers": "communication_buffers_peak",
}


def fail(message):
    print("check-timeline: " + message, file=sys.stderr)
    sys.exit(1)


def expect(what, drawn, reported):
    if drawn != reported:
        fail(f"{what}: drawn {drawn}, reported {reported}")


def load_svg(path):
    text = open(path, encoding="utf-8").read()
    if path.endswith(".html"):
        # The page embeds the picture; nothing else in it is SVG.
        match = re.search(r"<svg .*?</svg>", text, re.S)
        if not match:
            fail("no <svg> in the page")
        if "<script" in text or "http://" in text.replace(
                "http://www.w3.org/2000/svg", ""):
            fail("the page is not self-contained")
        text = match.group(0)
    return ET.fromstring(text)


def main():
    svg = load_svg(sys.argv[1])
    report = json.load(open(sys.argv[2]))
    num_points = int(svg.get("data-num-points"))
    print(f"points: {num_points}")

    phases = [(r.get("data-phase"), int(r.get("data-first")),
               int(r.get("data-last")))
              for r in svg.iter(SVG + "rect") if r.get("class") == "phase"]
    # Each panel repeats the phases.
    panels = [g for g in svg.iter(SVG + "g") if g.get("class") == "panel"]
    phases = phases[:len(phases) // max(len(panels), 1)]
    expected_first = 0
    for name, first, last in phases:
        expect(f"phase {name} starts", first, expected_first)
        expected_first = last + 1
        print(f"phase {name}: {first}-{last}")
    if phases:
        expect("the phases' end", expected_first, num_points)

    for panel in panels:
        space = panel.get("data-space")
        reported = report["memory_spaces"][space]
        expect(f"{space} max live", int(panel.get("data-max-live")),
               reported["max_live"])
        expect(f"{space} arena", int(panel.get("data-arena")),
               reported["arena"])
        line = (f"{space}: max live {reported['max_live']} at point "
                f"{panel.get('data-peak-point')}, arena {reported['arena']}")
        if panel.get("data-budget"):
            line += f", budget {panel.get('data-budget')}"
        print(line)
        if space == "device":
            expect("device peak point", int(panel.get("data-peak-point")),
                   report["peak_at"]["point"])
        for legend in panel.iter(SVG + "g"):
            if legend.get("class") != "category":
                continue
            category = legend.get("data-category")
            peak = int(legend.get("data-peak"))
            expect(f"{space} {category}", peak,
                   reported[CATEGORY_KEYS[category]])
            print(f"  {category}: {peak}")
        drawn = panel.findall(f"{SVG}polygon")
        for polygon in drawn:
            if polygon.get("data-category") not in CATEGORY_KEYS:
                fail(f"an area of unknown category in {space}")
        listed = [(t.get("data-name"), int(t.get("data-bytes")))
                  for t in panel.iter(SVG + "text")
                  if t.get("class") == "live-at-peak"]
        if space == "device":
            expected = [(b["name"], b["bytes"])
                        for b in report["live_at_peak"][:len(listed)]]
            expect("the largest tensors at the device peak", listed, expected)
        for name, size in listed:
            print(f"  at the peak: {name} {size}")


main()
