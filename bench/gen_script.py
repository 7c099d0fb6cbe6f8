#!/usr/bin/env python3
"""bench/gen_script.py LINES - a bpftrace script of about LINES lines:
probe blocks of ten lines each using maps, aggregations, arithmetic,
conditionals and printf, and a BEGIN that exits at once. Used to show that
compile time grows linearly and that a 1,000-line script loads fast."""
import sys

lines = int(sys.argv[1])
out = ["BEGIN { exit(); }"]
i = 0
while len(out) + 10 <= lines:
    out += [
        f"interval:s:{1000 + i} /@gate{i} == 0/ {{",
        f"  $x{i} = {i} * 3 + 7;",
        f"  @count{i} = count();",
        f"  @sum{i}[pid] = sum($x{i});",
        f"  @hist{i} = hist($x{i} << 2);",
        f"  if ($x{i} > {i}) {{ @big{i}++; }} else {{ @small{i}--; }}",
        f"  @last{i}[tid, cpu] = nsecs;",
        f"  printf(\"probe {i} %d %s\\n\", $x{i}, comm);",
        f"  @gate{i} = 1;",
        "}",
    ]
    i += 1
print("\n".join(out))
