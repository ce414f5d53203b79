"""``bench/server_syscalls.py``: the counts read from strace's summary table."""

from __future__ import annotations

from bench.server_syscalls import parse_summary

# strace -c -f of a server that served the tiny game (its errors column filled on one row only).
TABLE = """\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 83.36    0.112687           5     19602           write
  7.83    0.010580           2      4232        17 read
  2.61    0.003526           3       958           epoll_pwait
  0.04    0.000050           4        12           epoll_ctl
------ ----------- ----------- --------- --------- ----------------
100.00    0.135178           4     24804        17 total
"""


def test_each_system_call_is_counted_and_the_total_row_left_out() -> None:
    calls = parse_summary(TABLE)
    assert calls == {"write": 19602, "read": 4232, "epoll_pwait": 958, "epoll_ctl": 12}
    assert sum(calls.values()) == 24804  # (the table's own total)


def test_a_run_that_left_no_table_counts_nothing() -> None:
    refused = "strace: attach: ptrace(PTRACE_SEIZE, 4242): Operation not permitted\n"
    assert not parse_summary(refused)
