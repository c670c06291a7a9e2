#!/usr/bin/env python3
"""tools/bench_chart.py - the benches' CSVs (bench/bench_csv.h) as one PNG chart: a bar per
kernel/shape with its ratio to its limit (device copy bandwidth for the built-ins and CUB, cuBLAS
for GEMM, the raw driver for bench.c's rows), its goal marked, grouped by bench; the title names
the GPU and the date the CSVs give. Rows without a ratio (histogram, times with a bound) are
left out of the picture; --list prints every row.

  python3 tools/bench_chart.py [--dir build/bench-csv] [-o DIR/bench-chart.png] [--list]

Needs matplotlib to draw, not to --list. Exit 1 with the cause when a CSV is missing or
malformed; an empty CSV (no rows) draws as an empty group."""
import argparse
import csv
import math
import os
import sys

# file stem -> group heading; the order of the groups in the picture
BENCHES = [
    ("driver", "gpuk vs the raw driver (bench.c): raw time / gpuk time"),
    ("kernels", "built-in kernels (bench_kernels.c): bandwidth / device copy bandwidth"),
    ("cub", "CUB reference (bench_cub.cu): bandwidth / its device copy bandwidth"),
    ("gemm", "GEMM (bench_gemm.cu): cuBLAS time / gpuk time"),
]
COLUMNS = ["bench", "name", "size", "time_ms", "value", "unit", "ratio", "goal", "gpu", "date"]
NUMBERS = ["time_ms", "value", "ratio", "goal"]


def fail(msg):
    sys.exit("bench_chart: " + msg)


def read_csv(path):
    """The rows of one bench's CSV, numbers as float or None (empty field)."""
    if not os.path.isfile(path):
        fail("%s is missing (written by the bench run; BENCH_CSV_DIR or --dir names the folder)" % path)
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            return []  # an empty file: the bench wrote nothing
        if header != COLUMNS:
            fail("%s: header %s, expected %s" % (path, ",".join(header), ",".join(COLUMNS)))
        rows = []
        for line, fields in enumerate(reader, 2):
            if not fields:
                continue
            if len(fields) != len(COLUMNS):
                fail("%s:%d: %d fields, expected %d" % (path, line, len(fields), len(COLUMNS)))
            row = dict(zip(COLUMNS, fields))
            for k in NUMBERS:
                try:
                    row[k] = float(row[k]) if row[k] != "" else None
                except ValueError:
                    fail("%s:%d: %s is %r, not a number" % (path, line, k, row[k]))
                if row[k] is not None and not math.isfinite(row[k]):
                    row[k] = None
            rows.append(row)
        return rows


def load(folder):
    return [(stem, heading, read_csv(os.path.join(folder, stem + ".csv"))) for stem, heading in BENCHES]


def title_of(groups):
    rows = [r for _, _, rows in groups for r in rows]
    gpus = sorted({r["gpu"] for r in rows if r["gpu"]})
    dates = sorted({r["date"][:10] for r in rows if r["date"]})
    date = dates[0] if len(dates) == 1 else (dates[0] + " to " + dates[-1] if dates else "no date")
    return "gpuk benchmarks on %s, %s" % (" / ".join(gpus) or "an unknown GPU", date)


def label_of(r):
    return (r["name"] + "  " + r["size"]).strip()


def list_rows(groups):
    print(title_of(groups))
    for stem, _, rows in groups:
        print("[%s] %d row(s)" % (stem, len(rows)))
        for r in rows:
            ratio = "%.3f" % r["ratio"] if r["ratio"] is not None else "-"
            goal = "%.3g" % r["goal"] if r["goal"] is not None else "-"
            print("  %-52s ratio %-6s goal %s" % (label_of(r), ratio, goal))


def draw(groups, png):
    try:
        import matplotlib
    except ImportError:
        fail("matplotlib is not installed (pip install matplotlib); --list needs none")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    charted = [(heading, [r for r in rows if r["ratio"] is not None]) for _, heading, rows in groups]
    sizes = [max(len(rows), 1) for _, rows in charted]
    top = max([1.1] + [r["ratio"] for _, rows in charted for r in rows] +
              [r["goal"] for _, rows in charted for r in rows if r["goal"] is not None])
    height = 1.2 + 0.3 * sum(sizes) + 0.55 * len(charted)
    fig, axes = plt.subplots(len(charted), 1, sharex=True, squeeze=False, figsize=(10, height),
                             gridspec_kw={"height_ratios": sizes})
    for ax, (heading, rows) in zip(axes[:, 0], charted):
        ax.set_title(heading, loc="left", fontsize=9)
        ax.axvline(1.0, color="0.5", linestyle="--", linewidth=0.8)
        if not rows:
            ax.text(0.5, 0.5, "no rows", transform=ax.transAxes, ha="center", va="center", color="0.4")
            ax.set_yticks([])
            continue
        ys = list(range(len(rows)))[::-1]  # first row on top
        colours = ["0.6" if r["goal"] is None else "tab:green" if r["ratio"] >= r["goal"] else "tab:orange"
                   for r in rows]
        ax.barh(ys, [r["ratio"] for r in rows], height=0.7, color=colours)
        for y, r in zip(ys, rows):
            right = max(r["ratio"], r["goal"] if r["goal"] is not None else 0)  # clear of the tick
            ax.text(right + 0.01 * top, y, "%.2f" % r["ratio"], va="center", fontsize=7)
            if r["goal"] is not None:
                ax.plot([r["goal"]] * 2, [y - 0.45, y + 0.45], color="black", linewidth=2)
        ax.set_yticks(ys)
        ax.set_yticklabels([label_of(r) for r in rows], fontsize=7)
        ax.set_ylim(-0.6, len(rows) - 0.4)
    axes[-1, 0].set_xlim(0, top * 1.08)
    axes[-1, 0].set_xlabel("ratio to the limit (1 = the limit; black tick = goal; "
                           "green: goal met, orange: below goal, grey: no goal)", fontsize=8)
    fig.suptitle(title_of(groups), fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / height))  # room above the panels for the title
    fig.savefig(png, dpi=120)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default=os.environ.get("BENCH_CSV_DIR") or "build/bench-csv",
                    help="folder of driver.csv, kernels.csv, cub.csv, gemm.csv")
    ap.add_argument("-o", "--output", help="the PNG (default: DIR/bench-chart.png)")
    ap.add_argument("--list", action="store_true", help="print the rows, draw nothing")
    args = ap.parse_args()
    groups = load(args.dir)
    if args.list:
        list_rows(groups)
        return
    png = args.output or os.path.join(args.dir, "bench-chart.png")
    draw(groups, png)
    n = sum(1 for _, _, rows in groups for r in rows if r["ratio"] is not None)
    print("bench_chart: wrote %s (%d bars from %d CSVs)" % (png, n, len(groups)))


if __name__ == "__main__":
    main()
