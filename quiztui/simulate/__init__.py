"""The simulated judges and their oracles: deterministic replies to every prompt quiztui sends.

They power the offline demo (the SIMULATED judge), the loopback fake servers and the tests. They
are not the domain: ``core/`` never imports them.

- :mod:`vet` — the judge oracle (assertion batches and per-question prompts), the truth table;
- :mod:`grade`, :mod:`review`, :mod:`robustness`, :mod:`generate` — the other prompts' oracles;
- :mod:`logprobs` — token logprobs for a simulated reply.
"""
