#!/bin/sh
# A PreToolUse guard for the Bash tool, in the hook protocol of Claude Code settings files:
# the call arrives as JSON on stdin; exit 2 with a reason on stderr denies it; JSON on stdout
# with a permissionDecision decides; exit 0 with nothing printed lets it run.
#
# The command is read from the input as data and only compared, never run or evaluated.
input=$(cat)

case "$input" in
  *'rm -rf'*)
    echo "rm -rf is not allowed here; delete files one by one" >&2
    exit 2
    ;;
  *'push --force'*|*'push -f'*)
    printf '%s\n' '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "a force push rewrites shared history: a person decides"}}'
    exit 0
    ;;
esac
exit 0
