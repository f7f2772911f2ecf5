# What the guest's kernel says about its memory, for the guest suites.
# Source it after tap.sh.  Values in the units the files use (kB for
# /proc/meminfo, pages or events for /proc/vmstat).

# meminfo KEY: the value of "KEY:" in /proc/meminfo (kB, or a count).
meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }

# vmstat KEY: the counter KEY of /proc/vmstat.
vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

# OOM kills since boot.
oom_kills() { vmstat oom_kill; }

# field KEY: from "... KEY VALUE ..." lines on stdin (the judge's summary,
# regionpmctl's key-value output), the word after KEY.
field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'; }
