"""Kafka's internal topics and the KRaft metadata log, as data.

* :mod:`~kcodec.internal_topics.registry`: which generated key and value schemas a record of an
  internal topic (``__consumer_offsets``, ``__transaction_state``, ``__share_group_state``,
  ``__remote_log_metadata``, ``__cluster_metadata``) decodes with;
* :mod:`~kcodec.internal_topics.json_converter`: a decoded message as Kafka's own JSON (the
  generated ``*JsonConverter``'s shape), and back;
* :mod:`~kcodec.internal_topics.views`: one row per record in the views the dump and Spark share;
* :mod:`~kcodec.internal_topics.tables`: those rows read from a log directory's partitions;
* :mod:`~kcodec.internal_topics.groups`: the consumer-group member assignments a group record holds;
* :mod:`~kcodec.internal_topics.remote_log`: ``__remote_log_metadata`` in Kafka's text;
* :mod:`~kcodec.internal_topics.metadata`: the KRaft metadata image replayed from the log.

Above :mod:`kcodec.records` and :mod:`kcodec.log`, below the printers (:mod:`kcodec.tools`), the
Spark source and the commands: none of those is imported here."""
