"""Pipelines whose ``sample`` decodes synthetic rows back to the input schema."""

from __future__ import annotations

from sklearn.pipeline import Pipeline, _name_estimators

__all__ = ["SynthesisPipeline", "make_synthesis_pipeline"]


class _RestoreStepsOnFailure:
    """``fit`` that leaves the pipeline *and every step* as they were if it fails.

    scikit-learn's ``Pipeline.fit`` fits the steps in place, one after the
    other: when a later step fails, the earlier ones already hold the new
    fit (issue 13, finding 4: an encoder with new columns before a
    synthesizer with the old fit). The steps' ``__dict__`` and the step list
    are saved and restored on any exception, ``KeyboardInterrupt`` included.
    """

    def fit(self, X, y=None, **params):
        saved_self = dict(self.__dict__)
        saved_steps = [
            (step, dict(step.__dict__))
            for _, step in self.steps
            if hasattr(step, "__dict__") and not isinstance(step, str)
        ]
        try:
            return super().fit(X, y, **params)
        except BaseException:
            for step, state in saved_steps:
                step.__dict__.clear()
                step.__dict__.update(state)
            self.__dict__.clear()
            self.__dict__.update(saved_self)
            raise


class SynthesisPipeline(_RestoreStepsOnFailure, Pipeline):
    """A ``Pipeline`` ending in a synthesizer, with a decoding ``sample``.

    ``fit``, ``transform`` and ``score`` are scikit-learn's: the data passes
    through the encoders' ``transform`` into the synthesizer.
    :meth:`sample` draws from the last step and passes the rows back through
    the earlier steps' ``inverse_transform``, in reverse order, so the
    synthetic data comes out in the schema of the input (e.g. the original
    categorical table after a :class:`~skdp_synth.preprocessing.BooleanEncoder`).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.base import BaseEstimator, TransformerMixin
    >>> from skdp_synth import make_synthesis_pipeline
    >>> from skdp_synth.preprocessing import BooleanEncoder
    >>> enc = BooleanEncoder(categories={"c": ["a", "b", "z"]})
    >>> pipe = make_synthesis_pipeline(enc, "passthrough")
    >>> [name for name, _ in pipe.steps]
    ['booleanencoder', 'passthrough']
    """

    def sample(self, n_samples=None, random_state=None):
        """Draw ``n_samples`` synthetic rows from the last step and decode them.

        Parameters
        ----------
        n_samples : int, default=None
            Passed to the last step's ``sample``.
        random_state : None, int or RandomState, default=None
            Passed to the last step's ``sample``. Decoding uses each encoder's
            own ``random_state``.

        Returns
        -------
        X_synthetic : ndarray or DataFrame
            In the schema of the pipeline's input.
        """
        last = self._final_estimator
        if not hasattr(last, "sample"):
            raise TypeError(f"the last step {type(last).__name__} has no sample method")
        Y = last.sample(n_samples, random_state=random_state)
        for _, _, step in reversed(list(self._iter(with_final=False))):
            if not hasattr(step, "inverse_transform"):
                raise TypeError(
                    f"step {type(step).__name__} has no inverse_transform, so "
                    "synthetic rows cannot be decoded through it"
                )
            Y = step.inverse_transform(Y)
        return Y


def make_synthesis_pipeline(*steps, memory=None, verbose=False):
    """Build a :class:`SynthesisPipeline` from estimators, naming them automatically.

    Like :func:`sklearn.pipeline.make_pipeline`: step names are the lowercased
    class names.
    """
    return SynthesisPipeline(_name_estimators(steps), memory=memory, verbose=verbose)
