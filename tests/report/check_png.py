#!/usr/bin/python3
"""Checks a screenshot of a kiln HTML report shows its charts, not a blank page.

Usage: /usr/bin/python3 tests/report/check_png.py SHOT.png [--expect NAME,NAME...] [--min-ink F]

Decodes the PNG with zlib alone (8-bit RGB or RGBA, no interlace), then asks for:
- at least 3% of the pixels (or --min-ink's fraction) not near-white (text, tables and charts
  drawn), and
- the chart colours, each on at least 150 pixels. By default those of `kiln profile --html`: the
  first three op-type colours of the bar chart, timeline and roofline (colour1..colour3), and the
  roofline's red roof (roof). --expect names others: `kiln bench --html` with a baseline draws
  colour1 (before) and colour2 (after); `kiln optimize --report` draws colour1 and colour2 (nodes
  by op before and after) and colour3 (time per pass).
"""
import struct
import sys
import zlib

# kiln's category palette (src/report/charts.cc) and the roof colour.
COLOURS = {"colour1": (0x4e, 0x79, 0xa7), "colour2": (0xf2, 0x8e, 0x2b),
           "colour3": (0xe1, 0x57, 0x59), "colour4": (0x76, 0xb7, 0xb2),
           "roof": (0xc0, 0x39, 0x2b),
           "backend_cpu": (0x59, 0xa1, 0x4f)}  # kiln analyze's cpu boxes (xnnpack's are colour1)
PROFILE_COLOURS = ["colour1", "colour2", "colour3", "roof"]
TOLERANCE = 24  # per channel: antialiasing and colour management
MIN_PIXELS = 150


def fail(msg):
    print(f"check_png: FAIL: {msg}")
    sys.exit(1)


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path} is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        fail(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev, pos = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(line)
        prev = line
    return width, height, channels, rows


def main():
    args = sys.argv[1:]
    expected = PROFILE_COLOURS
    min_ink = 0.03
    if len(args) >= 3 and args[-2] == "--min-ink":  # a short page (kiln analyze of a small model)
        min_ink = float(args[-1])
        args = args[:-2]
    if len(args) == 3 and args[1] == "--expect":
        expected = args[2].split(",")
        args = args[:1]
    if len(args) != 1 or any(name not in COLOURS for name in expected):
        sys.exit(__doc__)
    width, height, channels, rows = read_png(args[0])
    counts = dict.fromkeys(expected, 0)
    inked = 0
    for line in rows:
        for x in range(0, width * channels, channels):
            r, g, b = line[x], line[x + 1], line[x + 2]
            if r < 235 or g < 235 or b < 235:
                inked += 1
            for name in expected:
                cr, cg, cb = COLOURS[name]
                if abs(r - cr) <= TOLERANCE and abs(g - cg) <= TOLERANCE and abs(b - cb) <= TOLERANCE:
                    counts[name] += 1
    share = inked / (width * height)
    print(f"check_png: {width}x{height}, {100 * share:.1f}% not white; colour pixels: {counts}")
    if share < min_ink:
        fail("the page is (nearly) blank")
    for name, n in counts.items():
        if n < MIN_PIXELS:
            fail(f"{name} is on {n} pixels: that chart was not drawn")
    print("check_png: ok")


if __name__ == "__main__":
    main()
