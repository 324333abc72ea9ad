# Generated from the specs by statechart-compiler. DO NOT EDIT.
# Regenerate with: statechart build
"""The modules generated from the specs: `NAME.py` for `NAME.yaml`."""
