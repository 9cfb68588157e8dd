#!/usr/bin/env bash
# The working tree a device call sends holds at most 64 MiB; the embedded weights alone are larger.
#   bash benchmarks/gpu_tree.sh slim      # before the call: tracked files over 16 MB leave git's index
#                                         # (they stay on disk), ignored through .git/info/exclude
#   bash benchmarks/gpu_tree.sh restore   # after it: back in the index, the exclude lines gone
# Between the two, `git status` shows them deleted: commit nothing until restore has run (slim refuses
# to start with staged changes, so restore gives back exactly the index it found).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
marker="# gpu_tree.sh slim"
case "${1:-}" in
slim)
    git diff --cached --quiet || { echo "gpu_tree.sh: staged changes; commit or unstage them first" >&2; exit 1; }
    grep -qF "$marker" "$exclude" 2>/dev/null && { echo "gpu_tree.sh: already slim" >&2; exit 1; }
    mapfile -t large < <(git ls-files | while IFS= read -r file; do
        [ -f "$file" ] && [ "$(stat -c %s "$file")" -gt 16777216 ] && echo "$file"; done)
    [ "${#large[@]}" -gt 0 ] || { echo "gpu_tree.sh: no tracked file over 16 MB" >&2; exit 0; }
    { echo "$marker"; printf '/%s\n' "${large[@]}"; } >> "$exclude"
    git rm -q --cached -- "${large[@]}"
    printf 'out of the index for the call: %s\n' "${large[@]}"
    echo "what travels: $(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1) bytes of tracked files"
    ;;
restore)
    grep -qF "$marker" "$exclude" 2>/dev/null || { echo "gpu_tree.sh: not slim" >&2; exit 0; }
    mapfile -t large < <(sed -n "/^$marker\$/,\$p" "$exclude" | tail -n +2 | sed 's|^/||')
    git reset -q HEAD -- "${large[@]}"
    sed -i "/^$marker\$/,\$d" "$exclude"
    git diff --quiet HEAD -- "${large[@]}" && echo "restored: ${large[*]}"
    ;;
*)
    echo "usage: bash benchmarks/gpu_tree.sh slim|restore" >&2; exit 2 ;;
esac
