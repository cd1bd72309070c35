"""The client adapters' tests need kafka-python and aiokafka (the dev group); without them they skip here."""

import pytest

pytest.importorskip("kafka", reason="needs the kafka-python extra")
pytest.importorskip("aiokafka", reason="needs the aiokafka extra")
