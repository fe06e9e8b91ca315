# The ozone figure of the trust guide (docs/guide/trust.md shows the lines below the marker;
# docs/conf.py runs this file at every build and saves the figure).
# --- shown in the trust guide ---
import matplotlib.pyplot as plt
import numkfs
from numkfs.datasets import load_dataset

ozone = load_dataset("ozone", dropna=True)  # 330 days, 8 meteorological features
res = numkfs.select(ozone.data, ozone.target, "knife", stability=True, feature_names=ozone.feature_names)
print(res.summary())
print(res.table())
ax = res.estimator.plot()  # the stability path, its threshold, and each stable group dotted
plt.show()
