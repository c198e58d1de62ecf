"""The BFCL domain: BFCL V3's eight multi-turn API classes, from the installed `bfcl-eval` package.

`classes` loads the classes as BFCL does, `docs` reads their function docs,
`execution` runs a call with BFCL's guards, `errors` reads the failures BFCL
answers in shapes of its own, `vocabulary`, `phrases` and `patches` hold what
synthesis knows of them, `official` runs BFCL's own checker, and `domain`
binds these into the domain's hooks. Nothing outside
this folder (and the task loader, `rods.tasks.bfcl`) names a BFCL class.
"""
