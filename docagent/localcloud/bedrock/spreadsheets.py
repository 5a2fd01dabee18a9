"""The text of a spreadsheet document block, for the local Bedrock Runtime: every sheet's cell values as text
rows (cells tab-separated, like ``csv_text``), xlsx read with openpyxl in read-only mode, xls (BIFF) with
xlrd. A workbook the model could not read raises ``SpreadsheetError`` with the reason, which
``docagent.localcloud.bedrock.document_text`` words as Bedrock's ValidationException about the document.

Hostile content: the reader stops at MAX_SPREADSHEET_CELLS cells (a row counts as one cell at least, so a
sheet of a million empty rows is refused too) and does not trust a sheet's declared dimension (a one-cell
sheet may declare A1:XFD1048576). The zip container is checked for bombs before
(functions/reading/documents.py).
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xlrd

# openpyxl (with numpy) and xlrd are imported by the reader that needs them, when a workbook is read: every
# local cloud process imports this module, few ever read a spreadsheet (0.36 s of CPU at each cloud's start:
# `python -X importtime`, 2026-12-02).

# A 4.5 MB document cannot hold much more than this in text a model would read (200k tokens is about 150k
# words); past it the local reader refuses the workbook, as the PDF reader refuses more than 100 pages.
MAX_SPREADSHEET_CELLS = 100_000


class SpreadsheetError(ValueError):
    """The workbook cannot be read; the message is the reason."""


def cell_text(value: object) -> str:
    """A cell value as a person reading the sheet would see it: 12.0 as 12, dates in ISO form."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        return value.date().isoformat()
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    return str(value)


def _rows_text(sheets: Iterable[Iterator[Iterable[object]]]) -> str:
    """Each sheet's rows, a blank line between sheets; refused past the cell cap or when nothing is in it."""
    lines: list[str] = []
    cells = 0
    for rows in sheets:
        for row in rows:
            texts = [cell_text(value) for value in row]
            cells += max(1, len(texts))
            if cells > MAX_SPREADSHEET_CELLS:
                raise SpreadsheetError(
                    f"the workbook has more than {MAX_SPREADSHEET_CELLS} cells, over the local reader's limit"
                )
            while texts and not texts[-1]:
                texts.pop()
            lines.append("\t".join(texts))
        lines.append("")
    text = "\n".join(lines).strip("\n")
    if not text.strip():
        raise SpreadsheetError("the workbook has no cell values")
    return text


def xlsx_text(data: bytes) -> str:
    """Every sheet of an xlsx workbook, the cached values of formulas (what Excel shows), in sheet order."""
    import openpyxl  # noqa: PLC0415 (when a workbook is read: see the imports)
    from openpyxl.utils.exceptions import InvalidFileException  # noqa: PLC0415 (as openpyxl)

    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, ValueError, TypeError, OSError) as error:
        raise SpreadsheetError(f"the XLSX is corrupt ({type(error).__name__}: {error})") from None
    except Exception as error:  # lxml's XMLSyntaxError and friends: a broken part of the package
        raise SpreadsheetError(f"the XLSX is corrupt ({type(error).__name__})") from None
    try:

        def sheets() -> Iterator[Iterator[Iterable[object]]]:
            for sheet in workbook.worksheets:
                sheet.reset_dimensions()  # do not trust the declared dimension: only the cells present
                yield sheet.iter_rows(values_only=True)

        return _rows_text(sheets())
    except SpreadsheetError:
        raise
    except Exception as error:  # a sheet part that does not parse: the workbook is broken
        raise SpreadsheetError(f"the XLSX is corrupt ({type(error).__name__})") from None
    finally:
        workbook.close()


def xls_text(data: bytes) -> str:
    """Every sheet of a legacy Excel (BIFF) workbook; an encrypted one is refused, as xlrd cannot read it."""
    import xlrd  # noqa: PLC0415 (when a workbook is read: see the imports)
    from xlrd.biffh import XLRDError  # noqa: PLC0415 (as xlrd)

    try:
        workbook = xlrd.open_workbook(file_contents=data, on_demand=True)
    except XLRDError as error:
        if "encrypt" in str(error).lower():
            raise SpreadsheetError("the XLS is encrypted or password-protected") from None
        raise SpreadsheetError(f"the XLS is corrupt ({error})") from None
    except Exception as error:  # xlrd raises bare AssertionError, struct.error, IndexError on broken files
        raise SpreadsheetError(f"the XLS is corrupt ({type(error).__name__})") from None
    try:

        def sheets() -> Iterator[Iterator[Iterable[object]]]:
            for index in range(workbook.nsheets):
                sheet = workbook.sheet_by_index(index)
                if sheet.nrows * max(1, sheet.ncols) > MAX_SPREADSHEET_CELLS:
                    raise SpreadsheetError(
                        f"the workbook has more than {MAX_SPREADSHEET_CELLS} cells, over the local reader's "
                        "limit"
                    )
                yield (_xls_row(workbook, sheet, row) for row in range(sheet.nrows))

        return _rows_text(sheets())
    except SpreadsheetError:
        raise
    except Exception as error:
        raise SpreadsheetError(f"the XLS is corrupt ({type(error).__name__})") from None
    finally:
        workbook.release_resources()


def _xls_row(workbook: xlrd.book.Book, sheet: xlrd.sheet.Sheet, row: int) -> list[object]:
    import xlrd  # noqa: PLC0415 (imported already by xls_text, which calls this)

    values: list[object] = []
    for cell in sheet.row(row):
        if cell.ctype == xlrd.XL_CELL_DATE:
            values.append(xlrd.xldate.xldate_as_datetime(float(cell.value), workbook.datemode))
        elif cell.ctype == xlrd.XL_CELL_BOOLEAN:
            values.append(bool(cell.value))
        elif cell.ctype == xlrd.XL_CELL_ERROR:
            values.append(xlrd.error_text_from_code.get(int(cell.value), "#ERR"))
        else:
            values.append(cell.value)
    return values
