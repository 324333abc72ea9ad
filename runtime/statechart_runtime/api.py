"""What generated modules use, in one import (`from statechart_runtime import api as _api`).

A generated module imports this after `statechart_runtime.check_api` has accepted the runtime;
everything it names is part of the API version in `statechart_runtime.API_VERSION`.
"""

from __future__ import annotations

from statechart_runtime import errors
from statechart_runtime.chart.json_values import JsonData
from statechart_runtime.chart.spec import SpecTables
from statechart_runtime.chart.timers import Timer
from statechart_runtime.chart.values import Clock, parse_time, utcnow
from statechart_runtime.chart.work import WorkTable
from statechart_runtime.psm.machine import Machine
from statechart_runtime.psm.names import HistoryState, State
from statechart_runtime.run.record import Counter, Record, Step, check_record, record_checker
from statechart_runtime.run.run import EventNotAccepted, Run

__all__ = ["Clock", "Counter", "EventNotAccepted", "HistoryState", "JsonData", "Machine",
           "Record", "Run", "SpecTables", "State", "Step", "Timer", "WorkTable", "check_record",
           "errors", "parse_time", "record_checker", "utcnow"]
