"""The grading benchmark (benchmarks/grading.py): its report shows the measured numbers; one real kernel-start round."""
from benchmarks import grading


def test_the_grading_section_reports_what_was_measured():
    run = {"seconds": 40.0, "per_notebook": 2.0, "peak_mib": 150.0, "correct_rows": 40}
    res = {"copies": 20, "jobs1": run, "jobs2": {**run, "seconds": 22.0}, "jobs1_no_sandbox": {**run, "seconds": 38.0},
           "speedup_2_jobs": 40 / 22, "sandbox_overhead_per_notebook": 0.1,
           "kernel_start": {"rounds": 10, "sandboxed": 1.1, "unconfined": 1.0, "overhead": 0.1}}
    text = "\n".join(grading.lines(res))
    assert "1.82x" in text and "0.10 s per notebook" in text and "20 copies" in text
    table = "\n".join(grading.lines(res, markdown=True))
    assert "| --jobs 2 | 22.0 |" in table


def test_one_round_of_kernel_starts_is_measured():
    ks = grading.kernel_starts(rounds=1)
    assert ks["sandboxed"] > 0 and ks["unconfined"] > 0
    assert abs(ks["overhead"] - (ks["sandboxed"] - ks["unconfined"])) < 1e-9
