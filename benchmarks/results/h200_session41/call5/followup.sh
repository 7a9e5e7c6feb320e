# Session 41, call 5's follow-up on the warm machine (the command as run; its output is
# followup.jsonl, copied from the call's output): 500-key splits on 128-key blocks.
python3 tools/gqa_plan_ab.py --rounds 2 --batch llama3-70b-tp8:4:32:2000 llama3-70b-tp8:4:16:8000 llama3-70b-tp8:4:64:2000 --variant s4 num_splits=4 --variant "s4 128 keys" num_splits=4 block_n=128 --variant "128 keys" block_n=128
