"""Let Sphinx read (and so execute) the book's pages in parallel.

Two extensions the book loads are safe to read in parallel but do not say so in a way Sphinx accepts:

- sphinx_external_toc always loads sphinx_multitoc_numbering, which does not declare whether it is
  parallel-safe, so Sphinx falls back to a serial read with a warning (an error under -W). It only
  replaces how section numbers are assigned, once, in the main process after every page is read,
  and keeps no per-page state. The book does not number its sections (_toc.yml has no `numbered`).
- sphinx_proof declares itself parallel-safe, but its ProofDomain lacks ``merge_domaindata``, so the
  merge of the workers' results raises NotImplementedError. The domain keeps nothing in its
  ``data``: its proofs live in ``env.proof_list``, which sphinx_proof merges itself (env-merge-info).
  So there is nothing for the domain to merge.
"""


def _nothing_to_merge(self, docnames, otherdata):
    """ProofDomain keeps no domain data (see the module docstring)."""


def setup(app):
    app.setup_extension("sphinx_multitoc_numbering")
    multitoc = app.extensions["sphinx_multitoc_numbering"]
    if multitoc.parallel_read_safe is None:
        multitoc.parallel_read_safe = True

    app.setup_extension("sphinx_proof")
    from sphinx_proof.domain import ProofDomain

    if "merge_domaindata" not in vars(ProofDomain):
        ProofDomain.merge_domaindata = _nothing_to_merge
    return {"parallel_read_safe": True, "parallel_write_safe": True}
