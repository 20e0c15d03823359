import pytest
from rich.console import Console

from tanglerag.tables import Table


def test_markdown_is_unpadded_rows_under_a_plain_rule():
    table = Table(["method", "EM [95% CI]", "calls/q"], [["concat", "31.0 [22.0, 40.0]", 1]])
    table.add("corg", "-", "2.50")
    assert table.markdown() == ("| method | EM [95% CI] | calls/q |\n"
                                "|---|---|---|\n"
                                "| concat | 31.0 [22.0, 40.0] | 1 |\n"
                                "| corg | - | 2.50 |")
    assert table.lines() == table.markdown().split("\n")
    assert table.last_line() == "| corg | - | 2.50 |"


def test_a_table_without_rows_is_its_header_and_rule():
    assert Table(["a", "b"]).markdown() == "| a | b |\n|---|---|"


def test_alignment_is_written_in_the_rule():
    table = Table(["name", "score", "note"], [["x", "1.0", ""]], align=[None, "right", "center"])
    assert table.lines()[1] == "|---|---:|:---:|"
    assert Table(["a"], align=["left"]).lines()[1] == "|:---|"
    with pytest.raises(ValueError, match="2 alignments for 1 columns"):
        Table(["a"], align=["left", "right"])


def test_a_pipe_inside_a_cell_is_escaped_so_the_columns_stay_put():
    table = Table(["answer", "n"], [["Mozart | Brahms", 2]])
    assert table.lines()[2] == "| Mozart \\| Brahms | 2 |"


def test_a_row_of_another_width_is_refused():
    table = Table(["a", "b"])
    with pytest.raises(ValueError, match="a row of 3 cells in a table of 2 columns"):
        table.add(1, 2, 3)
    with pytest.raises(ValueError, match="a row of 1 cells"):
        Table(["a", "b"], [["only"]])


def test_rich_rendering_shows_every_cell_as_plain_text():
    table = Table(["method", "EM"], [["[bold]concat[/bold]", "31.0 [22.0, 40.0]"]], align=[None, "right"])
    console = Console(width=80, color_system=None, record=True)
    console.print(table.rich())
    text = console.export_text()
    assert "[bold]concat[/bold]" in text and "31.0 [22.0, 40.0]" in text  # markup is not interpreted
    assert table.rich().columns[1].justify == "right"
