"""``jax.monitoring``: named events that code reports and listeners receive.

A library marks a point of its work with ``record_event`` (or a duration,
a time span, a scalar); every listener registered for that kind is called
with the event's name and keyword metadata, in registration order.  Nothing
is recorded when no listener is registered.  purejax itself reports no
events of its own yet; libraries (orbax, flax) report theirs through this
module.
"""

_event_listeners = []
_event_duration_secs_listeners = []
_event_time_span_listeners = []
_scalar_listeners = []


def record_event(event, **kwargs):
  """Reports that ``event`` happened (metadata in ``kwargs``: str or int)."""
  for callback in list(_event_listeners):
    callback(event, **kwargs)


def record_event_duration_secs(event, duration, **kwargs):
  """Reports that ``event`` took ``duration`` seconds."""
  for callback in list(_event_duration_secs_listeners):
    callback(event, duration, **kwargs)


def record_event_time_span(event, start_time, end_time, **kwargs):
  """Reports that ``event`` ran from ``start_time`` to ``end_time`` (seconds)."""
  for callback in list(_event_time_span_listeners):
    callback(event, start_time, end_time, **kwargs)


def record_scalar(event, value, **kwargs):
  """Reports a scalar summary ``value`` for ``event``."""
  for callback in list(_scalar_listeners):
    callback(event, value, **kwargs)


def register_event_listener(callback):
  """``callback(event, **kwargs)`` is called by every ``record_event``."""
  _event_listeners.append(callback)


def register_event_duration_secs_listener(callback):
  """``callback(event, duration_secs, **kwargs)`` is called by every
  ``record_event_duration_secs``."""
  _event_duration_secs_listeners.append(callback)


def register_event_time_span_listener(callback):
  """``callback(event, start_time, end_time, **kwargs)`` is called by every
  ``record_event_time_span``."""
  _event_time_span_listeners.append(callback)


def register_scalar_listener(callback):
  """``callback(event, value, **kwargs)`` is called by every ``record_scalar``."""
  _scalar_listeners.append(callback)


def _unregister(listeners, callback):
  # JAX asserts the callback was registered: an AssertionError otherwise.
  assert callback in listeners
  listeners.remove(callback)


def unregister_event_listener(callback):
  _unregister(_event_listeners, callback)


def unregister_event_duration_listener(callback):
  _unregister(_event_duration_secs_listeners, callback)


def unregister_event_time_span_listener(callback):
  _unregister(_event_time_span_listeners, callback)


def unregister_scalar_listener(callback):
  _unregister(_scalar_listeners, callback)


def clear_event_listeners():
  """Removes every listener of every kind."""
  for listeners in (_event_listeners, _event_duration_secs_listeners,
                    _event_time_span_listeners, _scalar_listeners):
    listeners.clear()
