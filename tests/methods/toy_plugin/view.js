// The toy family's inspector view: its title vote as a list.
registerStepView("toy_title_vote", "Toy title vote", (step) => {
  const list = document.createElement("ul");
  for (const [title, count] of Object.entries(step.counts)) {
    const item = document.createElement("li");
    item.textContent = `${title}: ${count} (toy view)`;
    list.appendChild(item);
  }
  return list;
});
