#!/usr/bin/env python3
"""Turn `perf script` output into folded stacks and an interactive SVG flame graph.

    perf record -F 2000 -g -p PID -- sleep 5
    perf script | python3 bench/flamegraph.py - --folded OUT.folded --svg OUT.svg

Input is the text `perf script` prints for a recording taken with `-g`: each sample is a header
line (`comm tid time: period event:`), then one indented line per frame, innermost first
(`addr symbol+0xoff (dso)`), then a blank line. Samples without frames are skipped.

Outputs (either or both):
  --folded  one line per unique stack, `root;...;leaf count`, root first. The process name is
            the root frame (so several programs or thread names stay apart) and kernel frames
            carry a `_[k]` suffix, the usual convention for folded files, so the file still says
            which frames ran in the kernel once the dso names are gone.
  --svg     a self-contained SVG flame graph: width is the share of samples, the root is at the
            bottom, every rectangle has a <title> tooltip (full name, module, samples, percent).
            Click a frame to zoom into it, click the root or press Escape to reset, Ctrl-F or the
            "Search" button highlights frames matching a regular expression.

Colours say where a frame's code lives: warm (red/orange/yellow) for the program's own code,
blue for the Swift runtime, libc, SQLite and other system libraries, green for the kernel, grey
for frames perf could not resolve. The exact shade within a colour comes from a hash of the name,
so neighbouring frames differ but the same function keeps its colour from one graph to the next.

Swift mangled names are demangled with one `swift demangle --simplified` call for all of them
(one process instead of thousands); if it is not on PATH the mangled names are kept.
Standard library only.
"""

import argparse
import colorsys
import html
import json
import os
import re
import shutil
import subprocess
import sys
import zlib

# Module classes a frame can belong to; they pick the colour family.
KERNEL, SYSTEM, PROGRAM, UNKNOWN, ROOT = "kernel", "system", "program", "unknown", "root"

# Default header: `comm  tid [cpu] time:`. comm may contain spaces and digits, so the match is
# anchored on the `time:` field rather than splitting on whitespace.
HEADER = re.compile(r"^(?P<comm>.+?)\s+(?P<pid>-?\d+)(?:/-?\d+)?\s+(?:\[\d+\]\s+)?\d+\.\d+:")
SINGLE_FRAME = re.compile(r"^\s*(?:\d+\s+)?\S+:\s+(\S.*)$")
FRAME_START = re.compile(r"^([0-9a-fA-F]+)\s+(.*)$")
OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$")
# glibc's default-version marker (`pthread_cond_signal@@GLIBC_2.3.2`) is noise in a label.
SYMBOL_VERSION = re.compile(r"@@[\w.]+$")
# Prefixes of Swift mangled names: Swift 5+ ($s, $e embedded), 4.2 ($S), 4.0 (_T0), Darwin (_$s).
SWIFT_MANGLED = ("$s", "$S", "$e", "_T0", "_$s", "_$S", "@__swiftmacro_")
# Libraries that count as "runtime/system" even outside the usual system directories (a
# toolchain under /opt or $HOME ships its own libswiftCore.so).
SYSTEM_LIB = re.compile(
    r"^(libswift|lib_Foundation|libFoundation|libdispatch|libBlocksRuntime|libc[.-]|libm[.-]|"
    r"libpthread|libdl|librt|ld-linux|ld-musl|libsqlite|libstdc\+\+|libgcc_s|libz[.-]|"
    r"libssl|libcrypto|libicu)"
)
SYSTEM_DIRS = ("/usr/lib", "/lib", "/usr/lib64", "/lib64", "/usr/local/lib", "/opt/swift/")


def classify(symbol, dso, addr):
    """Which module class a frame belongs to (decides its colour)."""
    if dso.startswith("[kernel") or dso.endswith(".ko") or symbol.endswith("_[k]"):
        return KERNEL
    if dso in ("[vdso]", "[vsyscall]"):
        return SYSTEM  # kernel-provided but runs in user mode on behalf of libc
    if dso in ("", "[unknown]"):
        # An unresolved address in the upper half is still recognisably kernel code.
        return KERNEL if addr >= 0xFFFF800000000000 else UNKNOWN
    base = os.path.basename(dso)
    if SYSTEM_LIB.match(base) or dso.startswith(SYSTEM_DIRS) or "/swift/linux/" in dso:
        return SYSTEM
    return PROGRAM


def parse_frame(text):
    """`addr symbol+0xoff (dso)` -> (symbol, dso, addr), or None if the line is not a frame.

    The dso is the last parenthesised group; it is found by matching parentheses from the end
    because symbols can contain parentheses themselves (C++ signatures, `(deleted)` paths)."""
    m = FRAME_START.match(text.strip())
    if not m:
        return None
    addr, rest = int(m.group(1), 16), m.group(2).rstrip()
    symbol, dso = rest, ""
    if rest.endswith(")"):
        depth = 0
        for i in range(len(rest) - 1, -1, -1):
            if rest[i] == ")":
                depth += 1
            elif rest[i] == "(":
                depth -= 1
                if depth == 0:
                    symbol, dso = rest[:i].rstrip(), rest[i + 1:-1]
                    break
    symbol = SYMBOL_VERSION.sub("", OFFSET.sub("", symbol))
    return symbol, dso, addr


def read_samples(stream):
    """Yield (comm, frames) per sample, frames innermost first as (symbol, dso, class)."""
    comm, frames, header = None, [], None

    def finish():
        # A recording without -g puts the single frame on the header line itself, after the
        # `period event:` fields.
        if comm is not None and not frames and header:
            m = HEADER.match(header)
            tail = SINGLE_FRAME.match(header[m.end():]) if m else None
            parsed = parse_frame(tail.group(1)) if tail else None
            if parsed:
                frames.append(parsed)
        return comm, [(s, d, classify(s, d, a)) for s, d, a in frames]

    for line in stream:
        line = line.rstrip("\n")
        if not line.strip():
            if comm is not None:
                yield finish()
            comm, frames, header = None, [], None
        elif line[0] in " \t":
            if comm is not None:
                parsed = parse_frame(line)
                if parsed:
                    frames.append(parsed)
        elif line.startswith("#"):
            continue  # `perf script --header` preamble
        else:
            if comm is not None:  # header with no blank line before it
                yield finish()
            m = HEADER.match(line)
            comm = (m.group("comm") if m else line.split()[0]).strip()
            frames, header = [], line
    if comm is not None:
        yield finish()


def frame_name(symbol, dso):
    """Display name; unresolved symbols are named after their dso so they are not all lumped
    together as one `[unknown]`."""
    if symbol and symbol != "[unknown]":
        return symbol
    if dso and dso != "[unknown]":
        return "[%s]" % os.path.basename(dso) if not dso.startswith("[") else dso
    return "[unknown]"


def demangle(names):
    """Map mangled Swift names to readable ones with a single `swift demangle` process."""
    mangled = sorted(n for n in names if n.startswith(SWIFT_MANGLED))
    if not mangled:
        return {}
    if shutil.which("swift"):
        cmd = ["swift", "demangle", "--simplified"]
    elif shutil.which("swift-demangle"):
        cmd = ["swift-demangle", "--simplified"]
    else:
        print("flamegraph: swift demangle not on PATH, keeping mangled names", file=sys.stderr)
        return {}
    try:
        # swift-demangle rewrites every mangled name it finds in stdin, line by line, so one
        # name per line in gives one demangled name per line out.
        out = subprocess.run(cmd, input="\n".join(mangled) + "\n", capture_output=True,
                             text=True, timeout=120, check=True).stdout.split("\n")
    except (OSError, subprocess.SubprocessError) as e:
        print("flamegraph: swift demangle failed (%s), keeping mangled names" % e, file=sys.stderr)
        return {}
    if out and out[-1] == "":
        out.pop()
    if len(out) != len(mangled):  # should not happen; a misaligned map would mislabel frames
        print("flamegraph: swift demangle output misaligned, keeping mangled names",
              file=sys.stderr)
        return {}
    return {m: d.strip() or m for m, d in zip(mangled, out)}


def clean(name):
    # `;` separates frames in the folded format and a trailing ` N` would read as the count.
    return name.replace(";", ":").replace("\n", " ")


class Node:
    __slots__ = ("name", "cls", "dso", "count", "children")

    def __init__(self, name, cls, dso):
        self.name, self.cls, self.dso = name, cls, dso
        self.count = 0
        self.children = {}


def build(samples):
    """Aggregate samples into {stack tuple: count}, stack root first, with per-frame metadata."""
    stacks = {}
    for comm, frames in samples:
        if not frames:
            continue
        stack = [(clean(comm), ROOT, "")]
        stack += [(frame_name(s, d), c, d) for s, d, c in reversed(frames)]
        key = tuple(stack)
        stacks[key] = stacks.get(key, 0) + 1
    return stacks


def rename(stacks, mapping):
    if not mapping:
        return stacks
    out = {}
    for stack, n in stacks.items():
        key = tuple((clean(mapping.get(name, name)), c, d) for name, c, d in stack)
        out[key] = out.get(key, 0) + n
    return out


def write_folded(stacks, path):
    lines = {}
    for stack, n in stacks.items():
        text = ";".join(name + ("_[k]" if c == KERNEL and not name.endswith("_[k]") else "")
                        for name, c, _ in stack)
        lines[text] = lines.get(text, 0) + n
    # Sorted so two runs over the same recording give byte-identical, diffable files.
    with open_out(path) as f:
        for text in sorted(lines):
            f.write("%s %d\n" % (text, lines[text]))


def open_out(path):
    if path == "-":
        return open(sys.stdout.fileno(), "w", encoding="utf-8", closefd=False)
    return open(path, "w", encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# SVG

WIDTH, PAD, FRAME_H, FONT = 1200, 10, 16, 12
CHAR_W = FONT * 0.61  # advance of a monospace glyph; labels are truncated with this estimate
TOP, BOTTOM = 56, 30  # title + legend band, details line

PALETTE = {
    # class: (hue range in degrees, saturation, lightness range)
    PROGRAM: ((0, 55), 0.80, (0.55, 0.65)),
    SYSTEM: ((195, 230), 0.60, (0.62, 0.74)),
    KERNEL: ((90, 135), 0.45, (0.55, 0.66)),
    UNKNOWN: ((0, 0), 0.0, (0.70, 0.80)),
    ROOT: ((260, 280), 0.15, (0.76, 0.80)),
}
LEGEND = [(PROGRAM, "program"), (SYSTEM, "Swift runtime / libc / SQLite / system libs"),
          (KERNEL, "kernel"), (UNKNOWN, "unresolved")]
MATCH_COLOUR = "#e040e0"


def colour(cls, name):
    (h0, h1), sat, (l0, l1) = PALETTE[cls]
    v = zlib.crc32(name.encode("utf-8", "replace"))
    # Two independent slices of the hash so hue and lightness do not move together.
    a, b = (v & 0xFFFF) / 0xFFFF, (v >> 16) / 0xFFFF
    r, g, bl = colorsys.hls_to_rgb((h0 + (h1 - h0) * a) / 360.0, l0 + (l1 - l0) * b, sat)
    return "#%02x%02x%02x" % (round(r * 255), round(g * 255), round(bl * 255))


def fit(name, width):
    """Truncate a label to what fits in `width` pixels (same rule as fit() in the script)."""
    n = int((width - 6) // CHAR_W)
    if n < 3:
        return ""
    return name if len(name) <= n else name[: n - 2] + ".."


def tree(stacks):
    root = Node("all", ROOT, "")
    for stack, n in stacks.items():
        root.count += n
        node = root
        for name, cls, dso in stack:
            child = node.children.get((name, cls))
            if child is None:
                child = node.children[(name, cls)] = Node(name, cls, dso)
            child.count += n
            node = child
    return root


def layout(root, min_percent):
    """(node, start sample, depth) for every frame wide enough to draw, root first.

    Children are placed alphabetically, not by time: a flame graph merges identical stacks so
    the width of a frame is its total share, wherever in the run the samples fell."""
    out, todo = [], [(root, 0, 0)]
    limit = root.count * min_percent / 100.0
    while todo:
        node, start, depth = todo.pop()
        if node.count < limit or node.count == 0:
            continue  # and its subtree, which is narrower still
        out.append((node, start, depth))
        x = start
        for key in sorted(node.children):
            child = node.children[key]
            todo.append((child, x, depth + 1))
            x += child.count
    return out


SCRIPT = r"""
"use strict";
// Zoom, search and the details line. Geometry is recomputed from the sample offsets stored on
// each frame (data-s start, data-n samples, data-d depth), so zooming never accumulates error.
var frames = [], details, matched, resetBtn, zoomRoot = null, searchRe = null;
function init() {
  details = document.getElementById("details");
  matched = document.getElementById("matched");
  resetBtn = document.getElementById("reset");
  var gs = document.querySelectorAll("g.f");
  for (var i = 0; i < gs.length; i++) {
    var g = gs[i], title = g.querySelector("title").textContent;
    var f = {g: g, s: +g.getAttribute("data-s"), n: +g.getAttribute("data-n"),
             d: +g.getAttribute("data-d"), name: title.split("\n")[0],
             info: title.replace(/\n/g, "   "), rect: g.querySelector("rect"),
             text: g.querySelector("text")};
    f.fill = f.rect.getAttribute("fill");
    frames.push(f);
    hook(f);
  }
  resetBtn.addEventListener("click", function () { zoom(null); });
  document.getElementById("search").addEventListener("click", function () {
    if (searchRe) clearSearch(); else search();
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape") { zoom(null); clearSearch(); }
    else if ((e.ctrlKey || e.metaKey) && e.key === "f") { e.preventDefault(); search(); }
  });
}
function hook(f) {
  f.g.addEventListener("click", function () { zoom(f.d === 0 ? null : f); });
  f.g.addEventListener("mouseover", function () { details.textContent = f.info; });
  f.g.addEventListener("mouseout", function () { details.textContent = " "; });
}
function fit(name, w) {
  var n = Math.floor((w - 6) / CFG.charW);
  if (n < 3) return "";
  return name.length <= n ? name : name.slice(0, n - 2) + "..";
}
function place(f, x, w) {
  f.g.style.display = "";
  f.rect.setAttribute("x", x.toFixed(2));
  f.rect.setAttribute("width", Math.max(w, 0).toFixed(2));
  f.text.setAttribute("x", (x + 3).toFixed(2));
  f.text.textContent = fit(f.name, w);
}
function zoom(z) {
  zoomRoot = z;
  var s0 = z ? z.s : 0, n0 = z ? z.n : CFG.total, d0 = z ? z.d : 0, k = CFG.plotW / n0;
  for (var i = 0; i < frames.length; i++) {
    var f = frames[i];
    if (f.s >= s0 && f.s + f.n <= s0 + n0 && f.d >= d0) {
      place(f, CFG.pad + (f.s - s0) * k, f.n * k);    // the zoomed frame and its descendants
      f.g.classList.remove("anc");
    } else if (f.d < d0 && f.s <= s0 && f.s + f.n >= s0 + n0) {
      place(f, CFG.pad, CFG.plotW);                   // ancestors: full width, dimmed
      f.g.classList.add("anc");
    } else {
      f.g.style.display = "none";                     // outside the zoomed subtree
    }
  }
  resetBtn.style.display = z ? "" : "none";
}
function search() {
  var term = prompt("Highlight frames matching (regular expression):", "");
  if (!term) return;
  try { searchRe = new RegExp(term); } catch (err) { alert(err); return; }
  var spans = [];
  for (var i = 0; i < frames.length; i++) {
    var f = frames[i], hit = f.d > 0 && searchRe.test(f.name);
    f.rect.setAttribute("fill", hit ? CFG.matchColour : f.fill);
    if (hit) spans.push([f.s, f.s + f.n]);
  }
  // Nested matches (recursion, a caller and its callee) must not be counted twice: union the
  // sample ranges before summing.
  spans.sort(function (a, b) { return a[0] - b[0]; });
  var covered = 0, end = -1;
  for (var j = 0; j < spans.length; j++) {
    var a = Math.max(spans[j][0], end), b = spans[j][1];
    if (b > a) covered += b - a;
    end = Math.max(end, b);
  }
  matched.textContent = "Matched: " + (100 * covered / CFG.total).toFixed(2) + "%";
  document.getElementById("search").textContent = "Clear search";
}
function clearSearch() {
  searchRe = null;
  for (var i = 0; i < frames.length; i++) frames[i].rect.setAttribute("fill", frames[i].fill);
  matched.textContent = " ";
  document.getElementById("search").textContent = "Search";
}
"""

STYLE = """
text { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: %dpx; fill: #000; }
#title { font-size: 17px; font-weight: bold; }
.ctl { fill: #2050a0; cursor: pointer; }
.f { cursor: pointer; }
.f text { pointer-events: none; }
.f:hover rect { stroke: #000; stroke-width: 0.6; }
.anc rect { opacity: 0.5; }
""" % FONT


def esc(s):
    return html.escape(s, quote=True)


def write_svg(stacks, path, title, min_percent):
    root = tree(stacks)
    total = root.count
    frames = layout(root, min_percent)
    depth_max = max(d for _, _, d in frames)
    height = TOP + (depth_max + 1) * FRAME_H + BOTTOM
    plot_w = WIDTH - 2 * PAD
    scale = plot_w / total
    cfg = {"total": total, "plotW": plot_w, "pad": PAD, "charW": CHAR_W,
           "matchColour": MATCH_COLOUR}

    out = []
    w = out.append
    w('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n')
    w('<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%d" height="%d" '
      'viewBox="0 0 %d %d" onload="init()">\n' % (WIDTH, height, WIDTH, height))
    w("<style>%s</style>\n" % STYLE)
    # CDATA keeps the script's < and & literal; the config is JSON so it is valid JavaScript.
    w("<script><![CDATA[\nvar CFG = %s;%s]]></script>\n" % (json.dumps(cfg), SCRIPT))
    w('<rect x="0" y="0" width="%d" height="%d" fill="#fbfbf6"/>\n' % (WIDTH, height))
    w('<text id="title" x="%d" y="24" text-anchor="middle">%s</text>\n'
      % (WIDTH // 2, esc(title)))
    # Legend on the left, controls on the right of the second line.
    x = PAD
    for cls, label in LEGEND:
        w('<rect x="%d" y="35" width="12" height="12" fill="%s" stroke="#888" '
          'stroke-width="0.5"/>' % (x, colour(cls, label)))
        w('<text x="%d" y="45">%s</text>\n' % (x + 16, esc(label)))
        x += 16 + int(len(label) * CHAR_W) + 18
    w('<text x="%d" y="45" text-anchor="end">%d samples</text>\n'
      % (WIDTH - PAD - 205, total))
    w('<text id="reset" class="ctl" x="%d" y="45" text-anchor="end" style="display:none">'
      'Reset zoom</text>\n' % (WIDTH - PAD - 105))
    w('<text id="search" class="ctl" x="%d" y="45" text-anchor="end">Search</text>\n'
      % (WIDTH - PAD))
    w('<text id="details" x="%d" y="%d"> </text>\n' % (PAD, height - 10))
    w('<text id="matched" x="%d" y="%d" text-anchor="end"> </text>\n'
      % (WIDTH - PAD, height - 10))

    w('<g id="frames">\n')
    for node, start, depth in frames:
        x = PAD + start * scale
        width = node.count * scale
        y = height - BOTTOM - (depth + 1) * FRAME_H
        pct = 100.0 * node.count / total
        where = {KERNEL: "kernel", ROOT: "process" if depth else "all samples"}.get(
            node.cls, node.dso or "unknown module")
        tip = "%s\n%s\n%d sample%s, %.2f%%" % (node.name, where, node.count,
                                              "" if node.count == 1 else "s", pct)
        w('<g class="f" data-s="%d" data-n="%d" data-d="%d"><title>%s</title>'
          '<rect x="%.2f" y="%d" width="%.2f" height="%d" rx="2" fill="%s"/>'
          '<text x="%.2f" y="%.1f">%s</text></g>\n'
          % (start, node.count, depth, esc(tip), x, y, width, FRAME_H - 1,
             colour(node.cls, node.name), x + 3, y + FRAME_H - 4.5, esc(fit(node.name, width))))
    w("</g>\n</svg>\n")
    with open_out(path) as f:
        f.write("".join(out))
    return len(frames)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input", help="`perf script` output, or - for stdin")
    ap.add_argument("--folded", help="write folded stacks here (- for stdout)")
    ap.add_argument("--svg", help="write the SVG flame graph here (- for stdout)")
    ap.add_argument("--title", help="SVG title (default: 'Flame graph: INPUT')")
    ap.add_argument("--min-percent", type=float, default=0.1,
                    help="leave out of the SVG frames with less than this share of all samples "
                         "(default 0.1; 0 keeps everything). The folded file is always complete.")
    ap.add_argument("--no-demangle", action="store_true", help="keep Swift mangled names")
    args = ap.parse_args()
    if not args.folded and not args.svg:
        ap.error("nothing to do: give --folded and/or --svg")

    if args.input == "-":
        # perf script can print bytes that are not UTF-8 (odd comm names); never die on them.
        stream = open(sys.stdin.fileno(), encoding="utf-8", errors="replace", closefd=False)
    else:
        stream = open(args.input, encoding="utf-8", errors="replace")
    with stream:
        stacks = build(read_samples(stream))
    if not stacks:
        sys.exit("flamegraph: no samples with call chains in input (recorded without -g?)")

    if not args.no_demangle:
        stacks = rename(stacks, demangle({name for st in stacks for name, _, _ in st}))
    if args.folded:
        write_folded(stacks, args.folded)
    if args.svg:
        title = args.title or "Flame graph: %s" % ("stdin" if args.input == "-" else
                                                     os.path.basename(args.input))
        drawn = write_svg(stacks, args.svg, title, max(args.min_percent, 0.0))
        print("flamegraph: %d samples, %d unique stacks, %d frames drawn"
              % (sum(stacks.values()), len(stacks), drawn), file=sys.stderr)


if __name__ == "__main__":
    main()
