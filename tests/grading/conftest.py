import os

# A bug in the checker must fail the grading tests, not become a Note shown to the learner; learners'
# kernels started by these tests inherit it.
os.environ["ATTN_GRADING_STRICT"] = "1"
