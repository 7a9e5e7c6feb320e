"""`splitkv bench`: splitkv beside its peers and the device's ceilings, measured in one run."""
