#!/usr/bin/env bash
# CI: build the Debian package, install it on this machine with apt-get, check what it put in
# place (systemd-analyze verify on the installed units, man s-code-run renders, the bash
# completion loads, the installed root helper starts with the shipped policy, admits nobody
# and writes its audit log), then purge it and check that nothing is left but that audit
# log. Runs as root; `make deb` must have been run (bin/s-code_*.deb).
set -euo pipefail
cd "$(dirname "$0")/.."
shopt -s nullglob
debs=(bin/s-code_*.deb)
[ ${#debs[@]} -eq 1 ] || { echo "ci-deb: want exactly one bin/s-code_*.deb, found ${#debs[@]}" >&2; exit 1; }
deb=${debs[0]}
fail() { echo "ci-deb: FAIL: $*" >&2; exit 1; }
step() { echo "== deb: $*"; }

if dpkg -s s-code >/dev/null 2>&1; then fail "s-code is already installed on this machine"; fi
had_group=no; getent group s-code >/dev/null && had_group=yes
# The purge check needs /var/log/s-code to hold only this run's audit log: an existing one
# (another run's root helper) is moved aside and put back at the end.
saved=
if [ -e /var/log/s-code ]; then
  saved=$(mktemp -d)/s-code
  mv /var/log/s-code "$saved"
fi
installed=no
restore() {
  # A failed check leaves no package behind for the next run.
  if [ $installed = yes ] && dpkg -s s-code >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq s-code >/dev/null 2>&1 || true
  fi
  if [ -n "$saved" ]; then rm -rf /var/log/s-code; mv "$saved" /var/log/s-code; fi
}
trap restore EXIT

step "apt-get install ./$deb"
installed=yes
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$deb" >/dev/null
dpkg -L s-code | sort > /tmp/s-code-deb-files.txt
for f in /usr/bin/s-code /usr/bin/s-code-sandbox /usr/bin/s-code-userhelper /usr/bin/s-code-roothelper \
  /usr/lib/systemd/system/s-code-roothelper.socket /usr/lib/systemd/system/s-code-roothelper.service \
  /usr/lib/systemd/user/s-code-userhelper.socket /usr/lib/systemd/user/s-code-userhelper.service \
  /usr/lib/sysusers.d/s-code.conf /etc/s-code/roothelper.toml /usr/share/man/man1/s-code-run.1 \
  /usr/share/man/man8/s-code-roothelper.8 /usr/share/bash-completion/completions/s-code \
  /usr/share/zsh/vendor-completions/_s-code /usr/share/fish/vendor_completions.d/s-code.fish \
  /usr/share/doc/s-code/README.md /usr/share/doc/s-code/docs/sandbox.md; do
  [ -f "$f" ] || fail "not installed: $f"
done
getent group s-code >/dev/null || fail "postinst did not create the group s-code"
grep -qx /etc/s-code/roothelper.toml /var/lib/dpkg/info/s-code.conffiles || fail "the policy is not a conffile"
s-code --version | grep -q '^s-code ' || fail "s-code --version"

step "systemd-analyze verify the installed units"
rt=$(mktemp -d)
out=$(XDG_RUNTIME_DIR=$rt SYSTEMD_LOG_COLOR=0 systemd-analyze verify \
  /usr/lib/systemd/system/s-code-roothelper.socket /usr/lib/systemd/system/s-code-roothelper.service 2>&1) || fail "verify (system): $out"
[ -z "$out" ] || fail "verify (system) warns: $out"
out=$(XDG_RUNTIME_DIR=$rt SYSTEMD_LOG_COLOR=0 systemd-analyze --user verify \
  /usr/lib/systemd/user/s-code-userhelper.socket /usr/lib/systemd/user/s-code-userhelper.service 2>&1) || fail "verify (user): $out"
[ -z "$out" ] || fail "verify (user) warns: $out"
rm -rf "$rt"

step "man s-code-run renders"
page=$(MANPAGER=cat MANWIDTH=80 man s-code-run 2>&1) || fail "man s-code-run: $page"
grep -q 'Judge a shell command, then run it through a helper' <<<"$page" || fail "man s-code-run: no description in: $page"
grep -q -- '--timeout' <<<"$page" || fail "man s-code-run: no --timeout option"
MANPAGER=cat man 8 s-code-userhelper | grep -q -- '-drain' || fail "man 8 s-code-userhelper: no --drain"

step "the bash completion loads and completes"
got=$(bash -c 'source /usr/share/bash-completion/bash_completion
  source /usr/share/bash-completion/completions/s-code
  complete -p s-code >/dev/null || exit 1
  COMP_WORDS=(s-code sta); COMP_CWORD=1; COMP_LINE="s-code sta"; COMP_POINT=${#COMP_LINE}
  __start_s-code s-code sta s-code; printf "%s\n" "${COMPREPLY[@]}"') || fail "bash completion: $got"
grep -qx 'status' <<<"$got" || fail "bash completion of 's-code sta' gave: $got"

step "the installed root helper with the shipped policy admits nobody and audits the refusal"
sock=$(mktemp -d)/root.sock
s-code-roothelper --listen "$sock" 2>/tmp/s-code-deb-roothelper.log &
pid=$!
for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || { cat /tmp/s-code-deb-roothelper.log >&2; fail "the root helper did not start"; }
set +e
msg=$(s-code run --root --socket "$sock" -- id 2>&1); rc=$?
set -e
kill -TERM "$pid"; wait "$pid" || true
[ "$rc" = 126 ] || fail "s-code run --root against the default policy exited $rc: $msg"
grep -q 'its policy admits nobody' <<<"$msg" || fail "refusal: $msg"
s-code audit verify --helper root >/dev/null || fail "audit verify of /var/log/s-code"
ls /var/log/s-code/* >/dev/null || fail "no audit log in /var/log/s-code"

step "apt-get purge leaves nothing but the audit log"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq s-code >/dev/null
dpkg -s s-code >/dev/null 2>&1 && fail "still installed after purge"
while read -r f; do
  [ -d "$f" ] && continue # shared directories (/usr/bin …) stay
  [ -e "$f" ] && fail "left after purge: $f"
done </tmp/s-code-deb-files.txt
[ -e /etc/s-code ] && fail "left after purge: /etc/s-code"
if [ $had_group = no ] && getent group s-code >/dev/null; then fail "left after purge: the group s-code"; fi
ls /var/log/s-code/* >/dev/null || fail "the purge removed the audit log"
rm -rf /var/log/s-code /tmp/s-code-deb-files.txt /tmp/s-code-deb-roothelper.log # this check's own leftovers
installed=no
echo "== deb: built, installed, verified and purged: ok"
