# The example on the front page (docs/index.md shows the lines below the
# marker; docs/conf.py runs this file at every build and saves the figure).
# --- shown on the front page ---
import matplotlib.pyplot as plt
import numkfs
from numkfs.datasets import load_dataset

sonar = load_dataset("sonar")  # 208 sonar returns, 60 frequency bands, 2 classes
# the kernel weight of each feature as p goes from 2 to 1
path = numkfs.lpkta_path(sonar.data, sonar.target, feature_names=sonar.feature_names)
print("features kept at p = 2 and at p = 1:", path.n_selected()[[0, -1]])
ax = path.plot()
plt.show()
