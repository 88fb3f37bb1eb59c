"""The KRaft metadata image: records of ``__cluster_metadata`` replayed as the controller does
(:mod:`.image`, :mod:`.replay`), compared (:mod:`.diff`), printed as Kafka's text (:mod:`.text`) and
laid out as tables (:mod:`.tables`)."""
