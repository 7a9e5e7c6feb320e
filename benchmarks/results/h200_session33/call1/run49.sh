# Session 33, call 1: the whole GPU suite at v0.2.34 (+ the lazy-maximum knob, off by default)
# and the keys-as-rows consumer's lazy maximum against the eager step (run48_lazy.py).
steps=()
steps+=("215:gpu_suite:python3 -m pytest tests -n 12 -q -p no:cacheprovider --durations 5 2>&1 | tail -15")
steps+=("300:lazy:python3 run48_lazy.py")
bash tools/device_steps.sh "${steps[@]}"
