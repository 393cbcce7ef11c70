# fleet_owners.py - write owners into a snapshot's blocks as `memprof snapshot save --owners` does, for fleet.sh.
"""Usage: python3 fleet_owners.py IN.pickle OUT.pickle

Every active block gets 'owner', 'category' and 'module' (an inactive one nothing): a parameter, gradient or
optimizer state of one of 64 modules (model.layers.N.mlp / .attn), an activation, or, one block in ten, no
owner at all (memory no Python tensor holds). Which one is drawn from the block's address, so that the same
input always gives the same output.
"""
import pickle
import sys

KINDS = (("PARAMETER", "%s.weight"), ("GRADIENT", "%s.weight.grad"),
         ("OPTIMIZER_STATE", "optimizer.state[%s.weight].exp_avg"), ("ACTIVATION", "hidden"))


def main():
    with open(sys.argv[1], "rb") as f:
        snap = pickle.load(f)
    for seg in snap["segments"]:
        for b in seg["blocks"]:
            if b["state"] == "inactive":
                continue
            h = (b["address"] * 0x9E3779B97F4A7C15 >> 20) & 0xFFFF
            if h % 10 == 0:
                continue
            module = "model.layers.%d.%s" % (h % 32, "mlp" if h & 64 else "attn")
            category, owner = KINDS[h % 4]
            b["owner"] = owner % module if "%s" in owner else owner
            b["category"] = category
            b["module"] = module
    with open(sys.argv[2], "wb") as f:
        pickle.dump(snap, f, protocol=4)


if __name__ == "__main__":
    main()
