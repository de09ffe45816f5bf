"""learner = auto: the points select() tries for each candidate learner, as the
learner would run if it were named."""
from ..errors import ConfigError
from ..learners import LEARNERS
from .settings import check_settings


def candidate_grid(settings):
    """The grid of learner = auto: for each candidate in order, its learner's own
    defaults (a CRF's iteration cap, which the epochs of a config or an argument, an
    online learner's passes, do not set) and each point of its own coarse grid
    (a CRF's c2 path, a point a decade), or one point. A candidate that refuses the settings is left out."""
    grid = []
    for name in settings.candidates:
        cls = LEARNERS[name]
        # (an epochs given is the online learners' passes: a CRF keeps its iteration cap)
        own = dict(cls.defaults)
        named = settings.but({"learner": name, **own})
        if cls.refuse(named) is None:
            grid += [{"learner": name, **own, **point} for point in cls.grid(named, coarse=True) or [{}]]
    if not grid:
        raise ConfigError(settings.origin("candidates"), 0, f"[train] candidates = {settings.candidates!r}: none "
                          f"of them can learn with these settings")
    return grid


def settled_candidates(grid, planned, templates, echo):
    """The points of the grid as check_settings settles them for the templates (bol
    with nothing to factor is sp; a bilinear learner without 1st-order templates is
    left out), each learner once."""
    out, seen = [], set()
    for point in grid:
        try:
            settled = check_settings(planned.but(point, "<chosen>"), templates, lambda line: None)
        except ConfigError as exc:
            echo(f"learner {point['learner']} is not a candidate here: {exc.message}")
            continue
        point = {**point, "learner": settled.learner}
        key = tuple(sorted(point.items()))
        if key not in seen:
            seen.add(key)
            out.append(point)
    return out
