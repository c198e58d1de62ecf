#!/bin/sh
# The template repository of the mcp_git example: a small project with history,
# a second branch, and uncommitted work (a modified file, a new file) for the
# tasks to stage and commit. Author, committer and dates come from the
# manifest's environment, so every copy has the same commit ids.
set -eu
git init -q -b main .
git config user.name "$GIT_AUTHOR_NAME"
git config user.email "$GIT_AUTHOR_EMAIL"

mkdir -p src docs
printf '# inventory\n\nA tiny stock tracker.\n' > README.md
printf 'def total(items):\n    return sum(items)\n' > src/stock.py
git add README.md src/stock.py
git commit -q -m "Start the inventory project"

printf 'Shipping rules\n==============\nOrders ship on weekdays.\n' > docs/shipping.txt
git add docs/shipping.txt
git commit -q -m "Document the shipping rules"

git branch release-1.0
git checkout -q -b experiment
printf 'def average(items):\n    return sum(items) / len(items)\n' > src/stats.py
git add src/stats.py
git commit -q -m "Try an average helper"
git checkout -q main

# Uncommitted work for the tasks.
printf 'def total(items):\n    """Sum of the stock counts."""\n    return sum(items)\n' > src/stock.py
printf 'Returns\n=======\nReturns are accepted within 30 days.\n' > docs/returns.txt
printf 'scratch notes\n' > notes.tmp
