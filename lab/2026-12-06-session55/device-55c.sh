#!/usr/bin/env bash
# device-55c.sh — third of three (device-55a.sh says why): the addmm grid's fallback instances and memcheck of each
# backend's test group. Superseded in the fifty-sixth session, whose H100 run found its 80 s a memcheck group too
# short for stream-K: it now runs lab/2026-12-06-session56/device-56c.sh (the grid and four groups); stream-K's
# memcheck is device-56d.sh, a call of its own. Carry [".carry/bin", ".carry/kcache.tgz"].
exec bash lab/2026-12-06-session56/device-56c.sh
