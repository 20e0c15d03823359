"""Methods, one package per family (a paper and its baselines): ``concat``, ``post_fusion``, ``corg``, ``diva``,
``cdit``, ``pcas``. Each holds its methods, prompts, parsers, settings section, trace steps and inspector view;
``base`` is the contract and ``registry`` lists the families."""
