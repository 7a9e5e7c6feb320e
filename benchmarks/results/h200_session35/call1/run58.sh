# Next session, call 1 (v0.2.36): the whole GPU suite (session 34's call 4 was cut at ~98% by
# the device budget), then the last 9 of session 34's 124 refit batches. Copy this file and
# schedule_refit_cases.json (here: those 9) and ../call3/run56_schedule_refit.py to the
# repository root; carry run58.sh and run56_schedule_refit.py.
steps=()
steps+=("260:gpu_suite:python3 -m pytest tests -n 12 -q -p no:cacheprovider --durations 5 > \$STEP_OUT/pytest.log 2>&1; tail -15 \$STEP_OUT/pytest.log")
steps+=("120:schedule_refit_rest:python3 run56_schedule_refit.py")
bash tools/device_steps.sh "${steps[@]}"
