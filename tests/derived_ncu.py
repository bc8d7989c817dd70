"""A raw-page Nsight Compute CSV DERIVED from the real details fixture, for tests.

No raw-page capture exists in the fixtures yet. This pivots the details rows into ncu's
raw layout (identification columns, one column per metric, a units row, every field
quoted) and rewrites some columns in the auto-scaled units ncu prints (``msecond``,
``Ghz``, ``Kbyte``, ``Mbyte``) with exact decimal arithmetic. Its first line says it is
derived; none of it is presented as ncu output.
"""

from __future__ import annotations

import csv
import io
from decimal import Decimal

ID_COLS = [
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
]
NVTX_COL = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
# label -> (unit ncu would auto-scale to, SI factor from the base unit written in the fixture)
SCALED = {
    "Duration": ("msecond", Decimal(10) ** 6),
    "DRAM Frequency": ("Ghz", Decimal(10) ** 9),
    "Shared Memory Configuration Size": ("Kbyte", Decimal(10) ** 3),
    "Maximum Buffer Size": ("Mbyte", Decimal(10) ** 6),
}


def plain(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def derived_raw(details_rows, scaled=SCALED, units_row=True, nvtx=True) -> str:
    """A raw-page CSV derived from the details rows (see module docstring)."""
    first = details_rows[0]
    header, units, values = list(ID_COLS), [""] * len(ID_COLS), [first[c] for c in ID_COLS]
    if nvtx:
        header.append(NVTX_COL)
        units.append("")
        values.append("<default domain>:derived-test-range:none:none:none:none:none:none")
    for r in details_rows:
        label = f"{r['Section Name']}: {r['Metric Name']}"  # labels repeat across sections
        value, unit = r["Metric Value"], r["Metric Unit"]
        if r["Metric Name"] in scaled and plain(value) is not None:
            unit, factor = scaled[r["Metric Name"]]
            value = f"{Decimal(value.replace(',', '')) / factor:f}"
        header.append(label)
        units.append(unit)
        values.append(value)
    buf = io.StringIO()
    buf.write("==PROF== Connected to process 6153 (derived test file, not ncu output)\n")
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(header)
    if units_row:
        w.writerow(units)
    w.writerow(values)
    return buf.getvalue()
