"""CDK constructs of the drac cloud runtime: one stack, four constructs."""
