#!/usr/bin/env bash
# device-53c.sh — device-53a without bmm and grouped (for a call with ~10 min of device time left; H200 only). ~5 min.
LAST= exec bash lab/2026-12-06-session53/device-53a.sh
