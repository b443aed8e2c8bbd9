"""IMProofBench: research-level proof problems with auto-graded subquestions, agentic evaluation, human grades.

Data model: ``problems`` (fields, workflow, file checks), ``catalog`` (the store: import,
export, versions, status), ``answers``, ``autograde`` (verdicts, overrides, weighted score),
``grades`` (human grades), ``tiers`` (Table 1 of the paper).
"""
