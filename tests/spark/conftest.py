"""The Spark tests need the `spark` extra; without it (the core-only CI step) they skip here."""

import pytest

pytest.importorskip("pyspark", reason="needs the spark extra")
pytest.importorskip("pandas", reason="needs the spark extra")
