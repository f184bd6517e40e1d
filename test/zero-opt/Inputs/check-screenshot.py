"""Checks a screenshot of the memory timeline taken by headless Chromium.

usage: check-screenshot.py SHOT.png WIDTH HEIGHT COLOR...

The PNG must be WIDTH x HEIGHT and show each COLOR (#rrggbb, the colors the
timeline's areas take over its phase bands) in at least 50 pixels, within 6
per channel: the picture was drawn, not an empty or broken page. Prints the
size and each color's pixel count.
"""

import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("check-screenshot: not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, color_type = header[:4]
    if depth != 8 or color_type not in (2, 6):
        sys.exit(f"check-screenshot: unexpected PNG format {depth}/{color_type}")
    channels = 3 if color_type == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 255
        rows.append(line)
        previous = line
    return width, height, channels, rows


def main():
    path, width, height = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    colors = [tuple(int(c[i:i + 2], 16) for i in (1, 3, 5))
              for c in sys.argv[4:]]
    got_width, got_height, channels, rows = read_png(path)
    print(f"size: {got_width}x{got_height}")
    if (got_width, got_height) != (width, height):
        sys.exit(f"check-screenshot: expected {width}x{height}")
    counts = [0] * len(colors)
    for row in rows:
        for x in range(0, len(row), channels):
            pixel = row[x:x + 3]
            for i, color in enumerate(colors):
                if all(abs(p - c) <= 6 for p, c in zip(pixel, color)):
                    counts[i] += 1
    for name, count in zip(sys.argv[4:], counts):
        print(f"{name}: {'present' if count >= 50 else 'missing'}")
    if min(counts) < 50:
        sys.exit(1)


main()
