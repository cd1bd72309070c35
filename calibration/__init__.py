"""Calibration: the evaluation's predictions checked against real consumer groups on a real broker.

``python -m calibration`` (``make calibrate``) plays scripted membership histories (:mod:`calibration.scenarios`)
on one local Apache Kafka broker, once per strategy (:mod:`calibration.runner`), measures from the members' own
output what each step cost (:mod:`calibration.measure`), replays the same history through the product's engine
(:mod:`calibration.predict`) and writes ``docs/calibration.md`` (:mod:`calibration.report`).
"""
